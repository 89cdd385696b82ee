package core

import (
	"errors"
	"testing"
)

func TestListQueryUnknownCursor(t *testing.T) {
	for _, c := range []struct {
		q           ListQuery
		code, param string
	}{
		{ListQuery{StartingAfter: "prod_x"}, "starting_after_invalid", "starting_after"},
		{ListQuery{EndingBefore: "prod_x"}, "ending_before_invalid", "ending_before"},
	} {
		err := c.q.UnknownCursor()
		var ce *Error
		if !errors.As(err, &ce) || ce.Type != TypeInvalidRequest || ce.Code != c.code || ce.Param != c.param ||
			ce.Message != "No such object in this list: 'prod_x'." {
			t.Fatalf("%+v: got %+v", c.q, ce)
		}
	}
}
