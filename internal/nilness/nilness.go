// Package nilness tells a value that is nil behind an interface, the usual
// trace of a constructor's ignored error, from one that exists.
package nilness

import "reflect"

// Of reports whether v is nil, or holds a nil pointer, function, map,
// slice, channel or interface.
func Of(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}
