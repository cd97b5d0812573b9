package frame

import (
	"image"
	"testing"
)

func TestCropRect(t *testing.T) {
	tests := []struct {
		crop [4]int
		w, h int
		want image.Rectangle
	}{
		{[4]int{}, 1280, 720, image.Rect(0, 0, 1280, 720)},
		{[4]int{0, 0, 1000, 1000}, 1280, 720, image.Rect(0, 0, 1280, 720)},
		{[4]int{500, 0, 1000, 500}, 1280, 720, image.Rect(640, 0, 1280, 360)},
		{[4]int{333, 333, 667, 667}, 1000, 999, image.Rect(333, 333, 667, 666)},
		{[4]int{1000, 1000, 0, 0}, 100, 100, image.Rect(0, 0, 100, 100)},   // inverted
		{[4]int{-50, 0, 5000, 1000}, 100, 100, image.Rect(0, 0, 100, 100)}, // clamped
		{[4]int{500, 500, 500, 500}, 100, 100, image.Rect(50, 50, 51, 51)}, // at least one pixel
		{[4]int{1000, 1000, 1000, 1000}, 100, 100, image.Rect(99, 99, 100, 100)},
	}
	for _, tt := range tests {
		if got := CropRect(tt.crop, tt.w, tt.h); got != tt.want {
			t.Errorf("CropRect(%v, %d, %d) = %v, want %v", tt.crop, tt.w, tt.h, got, tt.want)
		}
	}
}
