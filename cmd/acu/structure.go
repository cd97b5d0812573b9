package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/acu-dev/acu/internal/a11yjudge"
	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/ocr"
)

// openStructureJudges builds the accessibility judge of waits (each
// display's bus found from its AT_SPI_BUS property through the gate's
// connection, else from the session bus, as on a Wayland display, which
// has no X connection) and, when the chosen judge is a model, the OCR
// judge that decides the quoted-text rest of structural conditions
// instead of it (none when Tesseract is missing).
func openStructureJudges(c *config.Config, d *daemon, choice judge.Choice, log *slog.Logger) (*a11yjudge.Judge, judge.Backend) {
	bus := func(ctx context.Context, dpy string) (string, error) {
		if d.desktop != nil && !gate.IsWayland(dpy) {
			if conn, err := d.desktop.Conn(ctx, dpy); err == nil {
				if addr, err := atspi.DisplayBusAddress(ctx, conn); err == nil && addr != "" {
					return addr, nil
				}
			}
		}
		if d.sessionBus == "" {
			return "", errors.New("no AT_SPI_BUS on the display and no DBUS_SESSION_BUS_ADDRESS")
		}
		return atspi.BusAddress(ctx, d.sessionBus, 0)
	}
	a := a11yjudge.New(a11yjudge.Options{Bus: bus, Exclude: c.ExcludeWindows, Logger: log.With("component", "a11yjudge")})
	if choice.Backend == judge.OCR {
		return a, nil
	}
	eng, err := ocr.New(ocr.Options{Binary: c.TesseractBinary, Logger: log.With("component", "ocr")})
	if err != nil {
		log.Info("no OCR judge for the text of structural waits: their text goes to the model", "err", err)
		return a, nil
	}
	t, err := judge.NewOCR(judge.OCROptions{Engine: eng, Logger: log.With("component", "judge")})
	if err != nil {
		log.Info("no OCR judge for the text of structural waits: their text goes to the model", "err", err)
		return a, nil
	}
	return a, t
}

// structureOff is why the accessibility judge is off (ACU_JUDGE_A11Y=off),
// "" when it is on.
func structureOff(c *config.Config) string {
	if c.JudgeA11y {
		return ""
	}
	return "the accessibility judge is off (ACU_JUDGE_A11Y=off)"
}
