// Package judge answers one question about one frame (or one terminal's
// text): is this condition met? It owns the vision judge (a model asked the
// seed's YES/NO prompt through internal/llm), the built-in OCR judge
// (Tesseract through internal/ocr, for conditions about quoted visible text),
// the choice of backend from configuration and what is reachable, and the
// judge benchmark over a labelled set of real screenshots.
//
// It sits between the frame and model layers (frame, llm, ocr) and the wait
// engine (internal/smartwait), which decides when to ask. It does not
// schedule, capture, or cache verdicts: the wait engine dedupes (condition,
// frame hash) pairs itself.
package judge
