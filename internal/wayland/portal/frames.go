package portal

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Grab reads one frame of the PipeWire stream node from the PipeWire
// daemon at socket (a session's pipewire-0) with GStreamer's pipewiresrc
// as an external helper (gst-launch-1.0, from gstreamer1.0-tools and
// gstreamer1.0-pipewire): acu is built without cgo, so it does not link
// libpipewire, and reading PipeWire's native protocol in Go is not built
// yet (docs/wayland.md). The helper costs a process start per frame; it
// proves the stream carries the screen, not the speed a capture hub needs.
func Grab(ctx context.Context, socket string, node uint32) (image.Image, error) {
	env := []string{"XDG_RUNTIME_DIR=" + filepath.Dir(socket), "PIPEWIRE_REMOTE=" + filepath.Base(socket)}
	return grab(ctx, node, env, nil)
}

// GrabRemote reads one frame of node through remote, the PipeWire
// connection a portal session opened (PortalSession.PipeWireRemote), as
// Grab does.
func GrabRemote(ctx context.Context, remote *os.File, node uint32) (image.Image, error) {
	return grab(ctx, node, nil, remote)
}

func grab(ctx context.Context, node uint32, env []string, remote *os.File) (image.Image, error) {
	bin, err := exec.LookPath("gst-launch-1.0")
	if err != nil {
		return nil, fmt.Errorf("grab a PipeWire frame: %w (install gstreamer1.0-tools and gstreamer1.0-pipewire)", err)
	}
	src := []string{"pipewiresrc", "path=" + strconv.FormatUint(uint64(node), 10), "num-buffers=1", "always-copy=true"}
	if remote != nil {
		src = append(src, "fd=3") // the first of ExtraFiles
	}
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"-q"}, src...), "!", "videoconvert", "!", "pngenc", "!", "fdsink", "fd=1")...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}, env...)
	if remote != nil {
		cmd.ExtraFiles = []*os.File{remote}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("grab a PipeWire frame of node %d: gst-launch-1.0: %w: %s", node, err, tail(errb.String(), 1000))
	}
	img, err := png.Decode(&out)
	if err != nil {
		return nil, fmt.Errorf("grab a PipeWire frame of node %d: gst-launch-1.0 gave no PNG (%w): %s", node, err, tail(errb.String(), 1000))
	}
	return img, nil
}
