package actions

// InputError is a request that cannot be carried out as asked, whatever the
// runtime holds: its fix is in the request.
type InputError struct {
	Msg string
	Fix string // the hint, if known
}

func (e *InputError) Error() string { return e.Msg }

// Hint says how to write the request instead.
func (e *InputError) Hint() string { return e.Fix }

func inputError(msg, hint string) error { return &InputError{Msg: msg, Fix: hint} }

// hintError carries the fix for an error when it is known.
type hintError struct {
	err  error
	hint string
}

func (e hintError) Error() string { return e.err.Error() }
func (e hintError) Unwrap() error { return e.err }
func (e hintError) Hint() string  { return e.hint }

// WithHint attaches the fix to err (its Hint).
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return hintError{err: err, hint: hint}
}
