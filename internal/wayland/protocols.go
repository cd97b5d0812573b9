package wayland

// The interfaces acu speaks, as opcodes: requests (Req) in the order the
// protocol file declares them, events (Ev) likewise. An opcode is the
// index of the request or event in its interface, so a new version of a
// protocol only appends. Sources:
//   - wayland.xml (libwayland 1.21): wl_display, wl_registry, wl_callback,
//     wl_shm, wl_shm_pool, wl_buffer, wl_output, wl_seat;
//   - wlr-screencopy-unstable-v1.xml (wlr-protocols, version 3);
//   - wlr-virtual-pointer-unstable-v1.xml (wlr-protocols, version 2);
//   - virtual-keyboard-unstable-v1.xml (wlroots' protocol directory,
//     version 1);
//   - wlr-foreign-toplevel-management-unstable-v1.xml (wlr-protocols,
//     version 3);
//   - wlr-data-control-unstable-v1.xml (wlr-protocols, version 2);
//   - ext-idle-notify-v1.xml (wayland-protocols staging, version 2);
//   - idle.xml (KDE's plasma-wayland-protocols, version 1).
// docs/wayland.md lists them with what acu uses each for.

// wl_shm
const (
	ShmReqCreatePool = 0 // (new_id wl_shm_pool, fd, int size)
	ShmEvFormat      = 0 // (uint format)
)

// wl_shm formats (wl_shm.format): the DRM fourcc codes, except the first
// two, which are 0 and 1.
const (
	FormatARGB8888 = 0
	FormatXRGB8888 = 1
	FormatABGR8888 = 0x34324241 // 'AB24'
	FormatXBGR8888 = 0x34324258 // 'XB24'
)

// wl_shm_pool
const (
	ShmPoolReqCreateBuffer = 0 // (new_id wl_buffer, int offset, int width, int height, int stride, uint format)
	ShmPoolReqDestroy      = 1
)

// wl_buffer
const (
	BufferReqDestroy = 0
	BufferEvRelease  = 0
)

// wl_output (version 4 adds name and description)
const (
	OutputEvGeometry  = 0 // (int x, int y, int phys_w, int phys_h, int subpixel, string make, string model, int transform)
	OutputEvMode      = 1 // (uint flags, int width, int height, int refresh)
	OutputEvDone      = 2
	OutputEvScale     = 3 // (int factor)
	OutputEvName      = 4 // (string name)
	OutputModeCurrent = 1
)

// wl_seat
const (
	SeatEvCapabilities = 0 // (uint capabilities)
	SeatEvName         = 1 // (string name)
)

// zwlr_screencopy_manager_v1
const (
	ScreencopyReqCaptureOutput       = 0 // (new_id frame, int overlay_cursor, object output)
	ScreencopyReqCaptureOutputRegion = 1 // (new_id frame, int overlay_cursor, object output, int x, int y, int w, int h)
	ScreencopyReqDestroy             = 2
)

// zwlr_screencopy_frame_v1
const (
	FrameReqCopy           = 0 // (object wl_buffer)
	FrameReqDestroy        = 1
	FrameReqCopyWithDamage = 2 // since 2 (object wl_buffer)
	FrameEvBuffer          = 0 // (uint format, uint width, uint height, uint stride)
	FrameEvFlags           = 1 // (uint flags)
	FrameEvReady           = 2 // (uint tv_sec_hi, uint tv_sec_lo, uint tv_nsec)
	FrameEvFailed          = 3
	FrameEvDamage          = 4 // since 2 (uint x, uint y, uint width, uint height)
	FrameEvLinuxDmabuf     = 5 // since 3 (uint format, uint width, uint height)
	FrameEvBufferDone      = 6 // since 3
	FrameFlagYInvert       = 1
)

// zwlr_virtual_pointer_manager_v1 and zwlr_virtual_pointer_v1
const (
	PointerManagerReqCreate           = 0 // (object wl_seat or null, new_id)
	PointerManagerReqDestroy          = 1
	PointerManagerReqCreateWithOutput = 2 // since 2 (object wl_seat or null, object wl_output or null, new_id)
	PointerReqMotion                  = 0 // (uint time, fixed dx, fixed dy)
	PointerReqMotionAbsolute          = 1 // (uint time, uint x, uint y, uint x_extent, uint y_extent)
	PointerReqButton                  = 2 // (uint time, uint button, uint state)
	PointerReqAxis                    = 3 // (uint time, uint axis, fixed value)
	PointerReqFrame                   = 4
	PointerReqAxisSource              = 5 // (uint source)
	PointerReqAxisStop                = 6 // (uint time, uint axis)
	PointerReqAxisDiscrete            = 7 // (uint time, uint axis, fixed value, int discrete)
	PointerReqDestroy                 = 8
)

// zwp_virtual_keyboard_manager_v1 and zwp_virtual_keyboard_v1
const (
	KeyboardManagerReqCreate = 0 // (object wl_seat, new_id)
	KeyboardReqKeymap        = 0 // (uint format, fd, uint size)
	KeyboardReqKey           = 1 // (uint time, uint key, uint state)
	KeyboardReqModifiers     = 2 // (uint depressed, uint latched, uint locked, uint group)
	KeyboardReqDestroy       = 3
	KeymapFormatXKBV1        = 1 // wl_keyboard.keymap_format.xkb_v1
)

// zwlr_foreign_toplevel_manager_v1 and zwlr_foreign_toplevel_handle_v1
const (
	ToplevelManagerReqStop     = 0
	ToplevelManagerEvToplevel  = 0 // (new_id zwlr_foreign_toplevel_handle_v1)
	ToplevelManagerEvFinished  = 1
	ToplevelReqSetMaximized    = 0
	ToplevelReqUnsetMaximized  = 1
	ToplevelReqSetMinimized    = 2
	ToplevelReqUnsetMinimized  = 3
	ToplevelReqActivate        = 4 // (object wl_seat)
	ToplevelReqClose           = 5
	ToplevelReqSetRectangle    = 6 // (object wl_surface, int x, int y, int w, int h)
	ToplevelReqDestroy         = 7
	ToplevelReqSetFullscreen   = 8 // since 2 (object wl_output or null)
	ToplevelReqUnsetFullscreen = 9 // since 2
	ToplevelEvTitle            = 0 // (string)
	ToplevelEvAppID            = 1 // (string)
	ToplevelEvOutputEnter      = 2 // (object wl_output)
	ToplevelEvOutputLeave      = 3 // (object wl_output)
	ToplevelEvState            = 4 // (array of uint32 states)
	ToplevelEvDone             = 5
	ToplevelEvClosed           = 6
	ToplevelEvParent           = 7 // since 3 (object handle or null)
	ToplevelStateMaximized     = 0
	ToplevelStateMinimized     = 1
	ToplevelStateActivated     = 2
	ToplevelStateFullscreen    = 3
)

// zwlr_data_control_manager_v1, _device_v1, _source_v1 and _offer_v1
const (
	DataControlReqCreateSource = 0 // (new_id source)
	DataControlReqGetDevice    = 1 // (new_id device, object wl_seat)
	DataDeviceReqSetSelection  = 0 // (object source or null)
	DataDeviceReqDestroy       = 1
	DataDeviceEvDataOffer      = 0 // (new_id offer)
	DataDeviceEvSelection      = 1 // (object offer or null)
	DataDeviceEvFinished       = 2
	DataDeviceEvPrimary        = 3 // since 2 (object offer or null)
	DataSourceReqOffer         = 0 // (string mime_type)
	DataSourceReqDestroy       = 1
	DataSourceEvSend           = 0 // (string mime_type, fd)
	DataSourceEvCancelled      = 1
	DataOfferReqReceive        = 0 // (string mime_type, fd)
	DataOfferReqDestroy        = 1
	DataOfferEvOffer           = 0 // (string mime_type)
)

// ext_idle_notifier_v1 and ext_idle_notification_v1
const (
	IdleNotifierReqDestroy                  = 0
	IdleNotifierReqGetIdleNotification      = 1 // (new_id notification, uint timeout_ms, object wl_seat)
	IdleNotifierReqGetInputIdleNotification = 2 // since 2 (new_id notification, uint timeout_ms, object wl_seat): ignores idle inhibitors
	IdleNotificationReqDestroy              = 0
	IdleNotificationEvIdled                 = 0
	IdleNotificationEvResumed               = 1
)

// org_kde_kwin_idle and org_kde_kwin_idle_timeout
const (
	KwinIdleReqGetIdleTimeout          = 0 // (new_id org_kde_kwin_idle_timeout, object wl_seat, uint timeout_ms)
	KwinIdleTimeoutReqRelease          = 0
	KwinIdleTimeoutReqSimulateActivity = 1
	KwinIdleTimeoutEvIdle              = 0
	KwinIdleTimeoutEvResumed           = 1
)
