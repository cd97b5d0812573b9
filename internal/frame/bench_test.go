package frame

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cpuLoop is b.Loop that also reports the benchmark thread's own CPU time
// per op ("cpu-ns/op"): on a shared, overloaded machine wall time mostly
// measures the scheduler, CPU time much less so.
func cpuLoop(b *testing.B, f func()) {
	b.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	faults := minorFaults(b)
	start := threadCPU(b)
	n := 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(threadCPU(b)-start)/float64(n), "cpu-ns/op")
	b.ReportMetric(float64(minorFaults(b)-faults)/float64(n), "faults/op")
}

// minorFaults is the process's count of minor page faults: on this VM a
// fault costs microseconds, so a buffer that is not reused costs much more
// than its zeroing.
func minorFaults(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Minflt
}

func threadCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchScreen returns realistic screen content at w*h (stride w*4): the
// 1280x720 capture in testdata, tiled with an offset for larger sizes so
// text, colour and the photo-like wallpaper all repeat.
func benchScreen(b *testing.B, w, h int) []byte {
	b.Helper()
	src, sw, sh, sstride := loadBGRX(b, "screen.png")
	pix := make([]byte, w*h*4)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			sx, sy := (x+(y/sh)*300)%sw, y%sh
			copy(pix[(y*w+x)*4:(y*w+x)*4+4], src[sy*sstride+sx*4:])
		}
	}
	return pix
}

var benchSizes = []struct{ w, h int }{{1280, 720}, {1920, 1080}}

// hashPaths runs bench on the hash this CPU uses (prefix "") and, where
// that is the vectorised one, on the Go code too (prefix "go-").
func hashPaths(b *testing.B, bench func(prefix string)) {
	bench("")
	if FastHash() {
		defer UseFastHash(UseFastHash(false))
		bench("go-")
	}
}

func BenchmarkHash(b *testing.B) {
	for _, s := range benchSizes {
		pix := benchScreen(b, s.w, s.h)
		hashPaths(b, func(prefix string) {
			b.Run(fmt.Sprintf("%s%dx%d", prefix, s.w, s.h), func(b *testing.B) {
				b.SetBytes(int64(len(pix)))
				cpuLoop(b, func() { Hash(pix, s.w, s.h, s.w*4) })
			})
		})
	}
}

// BenchmarkHashCopy is Hash and a copy of the pixels in one pass
// (HashCopyBands over every band: what a capture does with a changed
// screen), against the two done one after the other; the destinations
// rotate through 8 buffers, so they are as cold as a new frame's.
func BenchmarkHashCopy(b *testing.B) {
	for _, s := range benchSizes {
		pix := benchScreen(b, s.w, s.h)
		var dst [8][]byte
		for i := range dst {
			dst[i] = make([]byte, len(pix))
		}
		k := 0
		hashPaths(b, func(prefix string) {
			b.Run(fmt.Sprintf("%sfused/%dx%d", prefix, s.w, s.h), func(b *testing.B) {
				b.SetBytes(int64(len(pix)))
				cpuLoop(b, func() { hashCopy(dst[k%8], pix, s.w, s.h, s.w*4); k++ })
			})
			b.Run(fmt.Sprintf("%shash+copy/%dx%d", prefix, s.w, s.h), func(b *testing.B) {
				b.SetBytes(int64(len(pix)))
				cpuLoop(b, func() { Hash(pix, s.w, s.h, s.w*4); copy(dst[k%8], pix); k++ })
			})
		})
	}
}

func BenchmarkResize(b *testing.B) {
	for _, s := range benchSizes {
		pix := benchScreen(b, s.w, s.h)
		tw, th := TargetSize(s.w, s.h, 960)
		dst := make([]byte, tw*th*4)
		for _, m := range []Mode{Exact, Fast} {
			b.Run(fmt.Sprintf("%v/%dx%d", m, s.w, s.h), func(b *testing.B) {
				cpuLoop(b, func() { Resize(dst, tw, th, pix, s.w, s.h, s.w*4, m) })
			})
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, s := range benchSizes {
		pix := benchScreen(b, s.w, s.h)
		tw, th := TargetSize(s.w, s.h, 960)
		small := make([]byte, tw*th*4)
		Resize(small, tw, th, pix, s.w, s.h, s.w*4, Exact)
		for _, e := range []struct {
			name string
			enc  func([]byte, []byte, int, int, int, int) ([]byte, error)
		}{{"turbo", EncodeJPEG}, {"stdlib", encodeStdJPEG}} {
			if e.name == "turbo" && JPEGEncoder != "libjpeg-turbo" {
				continue
			}
			b.Run(fmt.Sprintf("%s/%dx%d_to_%dx%d", e.name, s.w, s.h, tw, th), func(b *testing.B) {
				var out []byte
				cpuLoop(b, func() {
					var err error
					if out, err = e.enc(out, small, tw, th, tw*4, 72); err != nil {
						b.Fatal(err)
					}
				})
				b.ReportMetric(float64(len(out)), "jpeg_bytes")
			})
		}
	}
}

// BenchmarkPipeline is a fresh frame's JPEG(960, 72): resize + encode, what
// a judge pays once per captured frame.
func BenchmarkPipeline(b *testing.B) {
	for _, s := range benchSizes {
		pix := benchScreen(b, s.w, s.h)
		for _, m := range []Mode{Exact, Fast} {
			b.Run(fmt.Sprintf("%v/%dx%d", m, s.w, s.h), func(b *testing.B) {
				cpuLoop(b, func() {
					f := &Frame{Pix: pix, W: s.w, H: s.h, Stride: s.w * 4, Resample: m}
					if _, err := f.JPEG(960, 72); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

func BenchmarkPNG(b *testing.B) {
	pix := benchScreen(b, 1280, 720)
	cpuLoop(b, func() {
		if _, err := EncodePNG(pix, 1280, 720, 1280*4); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkPipelineFresh is BenchmarkPipeline as the capture package drives
// it: every frame lands in a newly allocated buffer (so the garbage collector
// runs every few frames, as in the daemon) before its JPEG(960, 72). The copy
// into the new buffer is outside the timed CPU only in spirit: it is counted.
func BenchmarkPipelineFresh(b *testing.B) {
	for _, s := range benchSizes {
		pix := benchScreen(b, s.w, s.h)
		for _, m := range []Mode{Exact, Fast} {
			b.Run(fmt.Sprintf("%v/%dx%d", m, s.w, s.h), func(b *testing.B) {
				cpuLoop(b, func() {
					p := make([]byte, len(pix))
					copy(p, pix)
					f := &Frame{Pix: p, W: s.w, H: s.h, Stride: s.w * 4, Resample: m}
					if _, err := f.JPEG(960, 72); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}
