package planner

import (
	"errors"
	"fmt"

	"github.com/sluice-sql/sluice/expr"
	"github.com/sluice-sql/sluice/parser"
	"github.com/sluice-sql/sluice/udf"
)

// JavaScriptLanguage is LANGUAGE JAVASCRIPT: a function whose body is
// inline JavaScript (AS $$ … $$), run on goja (udf/javascript.go).
const JavaScriptLanguage = "JAVASCRIPT"

// JavaScriptFunction is a JavaScript function's definition: its body,
// which the command carries in the statement's text, and the body
// compiled once for every query that binds this version.
type JavaScriptFunction struct {
	Body    string
	Program *udf.JSProgram
}

// javaScriptImpl compiles a JavaScript function's body into f.
func javaScriptImpl(f *expr.UserFunction, st *parser.CreateFunction) error {
	if !st.HasBody {
		return posErr(st.Pos, fmt.Errorf("%w: CREATE FUNCTION … LANGUAGE JAVASCRIPT needs its body: AS $$ return …; $$", ErrInvalid))
	}
	if len(st.With) > 0 {
		return posErr(st.With[0].Pos, fmt.Errorf("%w: a LANGUAGE JAVASCRIPT function takes no WITH properties (its code is the AS $$ … $$ body)", ErrInvalid))
	}
	prog, err := udf.CompileJavaScript(f.Name, f.Params, st.Body, udf.Signature{Args: f.Args, Result: f.Result})
	var syntax *udf.JSSyntaxError
	switch {
	case errors.As(err, &syntax):
		// Placed in the statement: the body's line 1 starts after $$.
		at := st.BodyPos
		if syntax.Line == 1 {
			at.Column += syntax.Column - 1
		} else {
			at.Line += syntax.Line - 1
			at.Column = syntax.Column
		}
		return posErr(at, fmt.Errorf("%w: %v: SyntaxError: %s", ErrInvalid, udf.ErrJavaScript, syntax.Message))
	case err != nil:
		return posErr(st.Pos, fmt.Errorf("%w: %v", ErrInvalid, err))
	}
	f.Impl = &JavaScriptFunction{Body: st.Body, Program: prog}
	f.Origin = "javascript sha256:" + udf.Sum([]byte(st.Body))
	return nil
}
