package virtual_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// The virtual pointer and keyboard on phoc, a second wlroots compositor
// (1024x768: phoc centres foot, which must fit whole on the output).

// TestTypeAnyCharacterOnPhoc: text in several scripts and key combos
// reach foot on phoc byte for byte.
func TestTypeAnyCharacterOnPhoc(t *testing.T) {
	typeAnyCharacter(t, waylandtest.StartPhoc(t, 1024, 768))
}

// TestButtonsAndWheelAtCellsOnPhoc: buttons 1-9 and wheel steps at given
// cells arrive as foot's SGR mouse reports with the right button and cell.
func TestButtonsAndWheelAtCellsOnPhoc(t *testing.T) {
	buttonsAndWheelAtCells(t, waylandtest.StartPhoc(t, 1024, 768))
}
