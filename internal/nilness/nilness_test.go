package nilness

import (
	"net/http"
	"testing"
)

func TestOf(t *testing.T) {
	var rt http.RoundTripper = (*http.Transport)(nil)
	var fn func()
	for _, v := range []any{nil, rt, fn, map[int]int(nil), []int(nil), (chan int)(nil)} {
		if !Of(v) {
			t.Errorf("Of(%#v) = false, want true", v)
		}
	}
	for _, v := range []any{http.DefaultTransport, 0, "", struct{}{}, func() {}, []int{}} {
		if Of(v) {
			t.Errorf("Of(%#v) = true, want false", v)
		}
	}
}
