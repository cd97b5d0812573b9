// Package frame owns acu's in-memory screen frame and its conversions: crop,
// downsize, content hash, JPEG and PNG encoding. It is pure: no X11, no I/O.
//
// Where it sits: the capture package fills a Frame from the X server (and
// blacks out excluded windows with BlackOut before publishing it); judges,
// the relay, the agent loop and saved screenshots read it through Sub, JPEG,
// PNG and RGBA. A published Frame is shared by every consumer on a display,
// so its encodings are memoized: one JPEG per (maxDim, quality), one PNG.
//
// Pixels stay in the X server's native BGRX layout (4 bytes per pixel, the
// pad byte is garbage, never alpha) from capture to encoder: no full-frame
// channel swap anywhere on the per-frame path. Resize works on BGRX
// directly; EncodeJPEG hands BGRX to libjpeg-turbo (TJPF_BGRX) when built
// with cgo, and falls back to image/jpeg without cgo.
//
// Resize offers two modes: Exact reproduces Pillow's BILINEAR resize bit for
// bit (so acu's judge JPEG is byte-identical to the reference pipeline's),
// Fast stays within 2 levels of it with fewer multiplications. Built with cgo
// on amd64, Exact runs in C with AVX2 (the same integer arithmetic, so the
// same bytes) when the CPU has it, and Fast then runs Exact too.
//
// Hash is computed band by band (HashBand rows). Built with cgo on amd64,
// on a CPU with AVX-512 (F, VL, DQ), several bands are hashed at once in C
// (hash_avx512.go): the same arithmetic, so the same values, about three
// times as fast as the Go code on one core.
//
// A producer that reuses pixel buffers (the capture hub) owns its frames'
// buffers: each holder of such a frame may Release it when done with its
// pixels, and the buffer goes back to the producer when the last hold is
// dropped, instead of when the collector finds it unreferenced
// (lifetime.go). Releasing is optional; an unreleased frame stays valid.
//
// What it does not do: capture, window geometry, OCR, annotation, any
// colour management. Hash is a content fingerprint, not a cryptographic hash.
package frame
