//go:build !cgo || !amd64

package frame

var hasHashAVX512 = false // a variable so that tests can compare paths

const hashAVX512OK = false

func hashBandsFast(sums []uint64, src, dst []byte, w, h, stride, b0, b1 int) bool { return false }

func hashFast(pix []byte, w, h, stride int) (uint64, bool) { return 0, false }
