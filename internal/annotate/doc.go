// Package annotate burns the agent loop's visual feedback into screenshots,
// in Go, without a browser: the orange heatmap of the actions just executed
// (with an optional fading, shrinking trail of earlier turns), the blue heat
// and borders of the model's regions of interest (bboxes), and the action
// labels. Its settings are the seed panel's UI_CONFIG keys (executed_heat,
// bbox_heat) plus labels.
//
// Where it sits: internal/agent captures the post-action frame, copies it,
// calls (*Annotator).Draw on the copy and sends that to the model. The seed's
// browser panel did the same with canvas gradients; Draw follows its
// semantics (radial gradients over normalized coordinates, source-over
// compositing, oldest trail turn first) so either annotator gives the model
// the same picture.
//
// It is pure: no I/O, no X, no encoding. It draws on BGRX (acu's frames) or
// RGBA pixels in place.
package annotate
