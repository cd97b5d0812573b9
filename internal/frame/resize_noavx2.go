//go:build !cgo || !amd64

package frame

var hasAVX2 = false // a variable so that tests can compare paths

func resizeExactAVX2(dst []byte, dw, dh, y0, y1 int, src []byte, sw, sh, stride int, hc, vc *coeffs) bool {
	return false
}

func avx2Fits(dw, dh, sw, sh int, hc, vc *coeffs) bool { return false }
