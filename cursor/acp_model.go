package cursor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// chooseModel asks the session for the seat's model, through the model
// option the session offers (its config option of category model, or its
// model list), and refuses a seat whose agent offers no choice or not
// that model: a turn must not run on a model nobody asked for.
func (d *ACP) chooseModel(ctx context.Context, conn *acp.ClientSideConnection, session string, models *acp.SessionModelState, opts []acp.SessionConfigOption) error {
	if d.s.Model == "" {
		return nil
	}
	name := d.s.Command[0]
	for _, o := range opts {
		sel := o.Select
		if sel == nil || sel.Category == nil || *sel.Category != acp.SessionConfigOptionCategoryModel {
			continue
		}
		values := selectValues(sel.Options)
		if !slices.Contains(values, d.s.Model) {
			return fmt.Errorf("%w: the ACP agent %s offers no model %q (it offers %s)", ErrExecFailed, name, d.s.Model, strings.Join(values, ", "))
		}
		if string(sel.CurrentValue) == d.s.Model {
			return nil
		}
		_, err := conn.SetSessionConfigOption(ctx, acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{
			SessionId: acp.SessionId(session), ConfigId: sel.Id, Value: acp.SessionConfigValueId(d.s.Model)}})
		if err != nil {
			return fmt.Errorf("%w: the ACP agent %s did not take model %q: %v", ErrExecFailed, name, d.s.Model, err)
		}
		return nil
	}
	if models == nil {
		return fmt.Errorf("%w: the ACP agent %s offers no choice of model in its session, so model %q cannot be asked for; remove model from the seat, or choose the model in the agent's own settings", ErrExecFailed, name, d.s.Model)
	}
	var ids []string
	for _, m := range models.AvailableModels {
		ids = append(ids, string(m.ModelId))
	}
	if !slices.Contains(ids, d.s.Model) {
		return fmt.Errorf("%w: the ACP agent %s offers no model %q (it offers %s)", ErrExecFailed, name, d.s.Model, strings.Join(ids, ", "))
	}
	if string(models.CurrentModelId) == d.s.Model {
		return nil
	}
	if _, err := conn.UnstableSetSessionModel(ctx, acp.UnstableSetSessionModelRequest{SessionId: acp.SessionId(session), ModelId: acp.UnstableModelId(d.s.Model)}); err != nil {
		return fmt.Errorf("%w: the ACP agent %s did not take model %q: %v", ErrExecFailed, name, d.s.Model, err)
	}
	return nil
}

func selectValues(o acp.SessionConfigSelectOptions) []string {
	var out []string
	if o.Ungrouped != nil {
		for _, v := range *o.Ungrouped {
			out = append(out, string(v.Value))
		}
	}
	if o.Grouped != nil {
		for _, g := range *o.Grouped {
			for _, v := range g.Options {
				out = append(out, string(v.Value))
			}
		}
	}
	return out
}
