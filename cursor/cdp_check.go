package cursor

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// PageReport is what InspectPage found on a seat's page, for doctor and
// calibrate: the page, and how many elements each selector setting
// matches (-1: not valid CSS). It never types or clicks.
type PageReport struct {
	Page   PageTarget
	Counts map[string]int
}

// InspectPage finds the seat's page (exactly one title must match) and
// counts what each of the seat's selectors matches now; sels, if given,
// are counted instead.
func InspectPage(ctx context.Context, c CDPSettings, sels map[string]string) (PageReport, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.ready(); err != nil {
		return PageReport{}, fmt.Errorf("%w: %v", ErrNotCalibrated, err)
	}
	title, err := regexp.Compile(c.Target)
	if err != nil {
		return PageReport{}, err
	}
	target, err := findPage(ctx, c.Endpoint, title)
	if err != nil {
		return PageReport{}, err
	}
	p, err := dialPage(ctx, c.Endpoint, target)
	if err != nil {
		return PageReport{}, err
	}
	defer p.close()
	if sels == nil {
		sels = (&CDP{cfg: c.withDefaults()}).selectorSettings()
	}
	counts, err := selectorCounts(ctx, p, sels)
	if err != nil {
		return PageReport{}, fmt.Errorf("cannot look at page %q: %w", target.Title, err)
	}
	return PageReport{Page: target, Counts: counts}, nil
}
