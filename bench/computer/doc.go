// Package computerbench measures acu as the executor of computer-use
// models: one turn of each dialect (POST /v1/computer/{vendor}: a click
// on a window that changes once, the settle, the screenshot encoded at
// the model's size) without model time, beside the vendor reference
// executor's fixed delays (an xdotool subprocess per action, then a fixed
// 2 s sleep before the screenshot, as Anthropic's computer-use demo does),
// interleaved in one run; and a model's wait on a still screen, which acu
// ends once the screen has been still. Figures: docs/PERFORMANCE.md.
package computerbench
