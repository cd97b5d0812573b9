// Package ocr reads screen text with Tesseract: words and lines with their
// boxes and confidences, in the original frame's pixel coordinates.
//
// Tesseract runs as a process (no cgo): the frame is converted to grayscale in
// Go, dark regions are inverted to dark-on-light, the image is upscaled so
// small screen fonts reach the glyph sizes Tesseract was trained on, and
// optionally binarized (Otsu); it is piped in as a PGM, and the TSV output is
// parsed back into words and lines, their boxes mapped to the input's pixels.
// Results are cached by frame content hash, and concurrent requests for the
// same frame share one Tesseract run.
//
// It sits below internal/judge (the OCR judge) and internal/elements (the
// element map). It knows nothing about conditions or verdicts: deciding what
// the text means is the caller's job.
package ocr
