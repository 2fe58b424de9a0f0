package parser_test

import (
	"errors"
	"fmt"

	"github.com/sluice-sql/sluice/parser"
)

func ExampleParse() {
	stmts, err := parser.Parse(`
	    CREATE TABLE hotel_5m AS
	      SELECT hotel, COUNT(*) AS bookings FROM bookings
	      WINDOW TUMBLING 5m GRACE 2m
	      GROUP BY hotel EMIT CHANGES;`)
	if err != nil {
		panic(err)
	}
	ct := stmts[0].(*parser.CreateSource)
	w := ct.Query.Window
	fmt.Println(w.Kind, w.Size, w.Grace, w.Compact)
	fmt.Println(ct)
	// Output:
	// TUMBLING 5m0s 2m0s true
	// CREATE TABLE HOTEL_5M AS SELECT HOTEL, COUNT(*) AS BOOKINGS FROM BOOKINGS WINDOW TUMBLING 5m GRACE 2m GROUP BY HOTEL EMIT CHANGES
}

func ExampleError_Pretty() {
	_, err := parser.Parse("SELECT a FORM b")
	var perr *parser.Error
	if errors.As(err, &perr) {
		fmt.Println(perr.Pretty())
	}
	// Output:
	// line 1:10: Syntax Error
	// Expecting {'FROM'}
	// SELECT a FORM b
	//          ^
}
