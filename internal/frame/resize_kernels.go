package frame

// Kernels unrolled for 2 to 6 taps (1280->960 needs 3, 1920->960 4,
// 2560->960 6), one set per pass and mode; the generic loops in resize.go
// handle other tap counts and define what these compute. They are written
// so that the compiler can prove the indexes in the inner loops (slices of
// constant length, rows re-sliced to one length) and drop most bounds
// checks. They were generated mechanically; change them together.

func horizExact2(out, row []byte, start, kk []int32) {
	start = start[:len(out)/4]
	kk = kk[:len(start)*2]
	for xx, x0 := range start {
		x := int(x0) * 4
		p := row[x : x+8]
		k := kk[xx*2 : xx*2+2]
		k0, k1 := k[0], k[1]
		o := out[xx*4 : xx*4+4]
		o[0] = byte((exactHalf + int32(p[0])*k0 + int32(p[4])*k1) >> precisionBits)
		o[1] = byte((exactHalf + int32(p[1])*k0 + int32(p[5])*k1) >> precisionBits)
		o[2] = byte((exactHalf + int32(p[2])*k0 + int32(p[6])*k1) >> precisionBits)
		o[3] = 0
	}
}

func vertExact2(out []byte, rows [][]byte, kk []int32) {
	r0, r1 := rows[0], rows[1]
	k0, k1 := kk[0], kk[1]
	for len(out) >= 4 && len(r0) >= 4 && len(r1) >= 4 {
		out[0] = byte((exactHalf + int32(r0[0])*k0 + int32(r1[0])*k1) >> precisionBits)
		out[1] = byte((exactHalf + int32(r0[1])*k0 + int32(r1[1])*k1) >> precisionBits)
		out[2] = byte((exactHalf + int32(r0[2])*k0 + int32(r1[2])*k1) >> precisionBits)
		out[3] = 0
		out, r0, r1 = out[4:], r0[4:], r1[4:]
	}
}

func horizFast2(out, sp []uint64, start []int32, kk []uint64) {
	start = start[:len(out)]
	kk = kk[:len(out)*2]
	for xx, x0 := range start {
		x := int(x0)
		p := sp[x : x+2]
		k := kk[xx*2 : xx*2+2]
		k0, k1 := k[0], k[1]
		out[xx] = (fastHalf + p[0]*k0 + p[1]*k1) >> fastBits & laneMask
	}
}

func vertFast2(out []byte, rows [][]uint64, kk []uint64) {
	n := len(out) / 4
	r0, r1 := rows[0][:n], rows[1][:n]
	k0, k1 := kk[0], kk[1]
	for x := range r0 {
		v := (fastHalf + r0[x]*k0 + r1[x]*k1) >> fastBits
		o := out[x*4 : x*4+4 : x*4+4]
		o[0], o[1], o[2], o[3] = byte(v), byte(v>>laneG), byte(v>>laneR), 0
	}
}

func horizExact3(out, row []byte, start, kk []int32) {
	start = start[:len(out)/4]
	kk = kk[:len(start)*3]
	for xx, x0 := range start {
		x := int(x0) * 4
		p := row[x : x+12]
		k := kk[xx*3 : xx*3+3]
		k0, k1, k2 := k[0], k[1], k[2]
		o := out[xx*4 : xx*4+4]
		o[0] = byte((exactHalf + int32(p[0])*k0 + int32(p[4])*k1 + int32(p[8])*k2) >> precisionBits)
		o[1] = byte((exactHalf + int32(p[1])*k0 + int32(p[5])*k1 + int32(p[9])*k2) >> precisionBits)
		o[2] = byte((exactHalf + int32(p[2])*k0 + int32(p[6])*k1 + int32(p[10])*k2) >> precisionBits)
		o[3] = 0
	}
}

func vertExact3(out []byte, rows [][]byte, kk []int32) {
	r0, r1, r2 := rows[0], rows[1], rows[2]
	k0, k1, k2 := kk[0], kk[1], kk[2]
	for len(out) >= 4 && len(r0) >= 4 && len(r1) >= 4 && len(r2) >= 4 {
		out[0] = byte((exactHalf + int32(r0[0])*k0 + int32(r1[0])*k1 + int32(r2[0])*k2) >> precisionBits)
		out[1] = byte((exactHalf + int32(r0[1])*k0 + int32(r1[1])*k1 + int32(r2[1])*k2) >> precisionBits)
		out[2] = byte((exactHalf + int32(r0[2])*k0 + int32(r1[2])*k1 + int32(r2[2])*k2) >> precisionBits)
		out[3] = 0
		out, r0, r1, r2 = out[4:], r0[4:], r1[4:], r2[4:]
	}
}

func horizFast3(out, sp []uint64, start []int32, kk []uint64) {
	start = start[:len(out)]
	kk = kk[:len(out)*3]
	for xx, x0 := range start {
		x := int(x0)
		p := sp[x : x+3]
		k := kk[xx*3 : xx*3+3]
		k0, k1, k2 := k[0], k[1], k[2]
		out[xx] = (fastHalf + p[0]*k0 + p[1]*k1 + p[2]*k2) >> fastBits & laneMask
	}
}

func vertFast3(out []byte, rows [][]uint64, kk []uint64) {
	n := len(out) / 4
	r0, r1, r2 := rows[0][:n], rows[1][:n], rows[2][:n]
	k0, k1, k2 := kk[0], kk[1], kk[2]
	for x := range r0 {
		v := (fastHalf + r0[x]*k0 + r1[x]*k1 + r2[x]*k2) >> fastBits
		o := out[x*4 : x*4+4 : x*4+4]
		o[0], o[1], o[2], o[3] = byte(v), byte(v>>laneG), byte(v>>laneR), 0
	}
}

func horizExact4(out, row []byte, start, kk []int32) {
	start = start[:len(out)/4]
	kk = kk[:len(start)*4]
	for xx, x0 := range start {
		x := int(x0) * 4
		p := row[x : x+16]
		k := kk[xx*4 : xx*4+4]
		k0, k1, k2, k3 := k[0], k[1], k[2], k[3]
		o := out[xx*4 : xx*4+4]
		o[0] = byte((exactHalf + int32(p[0])*k0 + int32(p[4])*k1 + int32(p[8])*k2 + int32(p[12])*k3) >> precisionBits)
		o[1] = byte((exactHalf + int32(p[1])*k0 + int32(p[5])*k1 + int32(p[9])*k2 + int32(p[13])*k3) >> precisionBits)
		o[2] = byte((exactHalf + int32(p[2])*k0 + int32(p[6])*k1 + int32(p[10])*k2 + int32(p[14])*k3) >> precisionBits)
		o[3] = 0
	}
}

func vertExact4(out []byte, rows [][]byte, kk []int32) {
	r0, r1, r2, r3 := rows[0], rows[1], rows[2], rows[3]
	k0, k1, k2, k3 := kk[0], kk[1], kk[2], kk[3]
	for len(out) >= 4 && len(r0) >= 4 && len(r1) >= 4 && len(r2) >= 4 && len(r3) >= 4 {
		out[0] = byte((exactHalf + int32(r0[0])*k0 + int32(r1[0])*k1 + int32(r2[0])*k2 + int32(r3[0])*k3) >> precisionBits)
		out[1] = byte((exactHalf + int32(r0[1])*k0 + int32(r1[1])*k1 + int32(r2[1])*k2 + int32(r3[1])*k3) >> precisionBits)
		out[2] = byte((exactHalf + int32(r0[2])*k0 + int32(r1[2])*k1 + int32(r2[2])*k2 + int32(r3[2])*k3) >> precisionBits)
		out[3] = 0
		out, r0, r1, r2, r3 = out[4:], r0[4:], r1[4:], r2[4:], r3[4:]
	}
}

func horizFast4(out, sp []uint64, start []int32, kk []uint64) {
	start = start[:len(out)]
	kk = kk[:len(out)*4]
	for xx, x0 := range start {
		x := int(x0)
		p := sp[x : x+4]
		k := kk[xx*4 : xx*4+4]
		k0, k1, k2, k3 := k[0], k[1], k[2], k[3]
		out[xx] = (fastHalf + p[0]*k0 + p[1]*k1 + p[2]*k2 + p[3]*k3) >> fastBits & laneMask
	}
}

func vertFast4(out []byte, rows [][]uint64, kk []uint64) {
	n := len(out) / 4
	r0, r1, r2, r3 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n]
	k0, k1, k2, k3 := kk[0], kk[1], kk[2], kk[3]
	for x := range r0 {
		v := (fastHalf + r0[x]*k0 + r1[x]*k1 + r2[x]*k2 + r3[x]*k3) >> fastBits
		o := out[x*4 : x*4+4 : x*4+4]
		o[0], o[1], o[2], o[3] = byte(v), byte(v>>laneG), byte(v>>laneR), 0
	}
}

func horizExact5(out, row []byte, start, kk []int32) {
	start = start[:len(out)/4]
	kk = kk[:len(start)*5]
	for xx, x0 := range start {
		x := int(x0) * 4
		p := row[x : x+20]
		k := kk[xx*5 : xx*5+5]
		k0, k1, k2, k3, k4 := k[0], k[1], k[2], k[3], k[4]
		o := out[xx*4 : xx*4+4]
		o[0] = byte((exactHalf + int32(p[0])*k0 + int32(p[4])*k1 + int32(p[8])*k2 + int32(p[12])*k3 + int32(p[16])*k4) >> precisionBits)
		o[1] = byte((exactHalf + int32(p[1])*k0 + int32(p[5])*k1 + int32(p[9])*k2 + int32(p[13])*k3 + int32(p[17])*k4) >> precisionBits)
		o[2] = byte((exactHalf + int32(p[2])*k0 + int32(p[6])*k1 + int32(p[10])*k2 + int32(p[14])*k3 + int32(p[18])*k4) >> precisionBits)
		o[3] = 0
	}
}

func vertExact5(out []byte, rows [][]byte, kk []int32) {
	r0, r1, r2, r3, r4 := rows[0], rows[1], rows[2], rows[3], rows[4]
	k0, k1, k2, k3, k4 := kk[0], kk[1], kk[2], kk[3], kk[4]
	for len(out) >= 4 && len(r0) >= 4 && len(r1) >= 4 && len(r2) >= 4 && len(r3) >= 4 && len(r4) >= 4 {
		out[0] = byte((exactHalf + int32(r0[0])*k0 + int32(r1[0])*k1 + int32(r2[0])*k2 + int32(r3[0])*k3 + int32(r4[0])*k4) >> precisionBits)
		out[1] = byte((exactHalf + int32(r0[1])*k0 + int32(r1[1])*k1 + int32(r2[1])*k2 + int32(r3[1])*k3 + int32(r4[1])*k4) >> precisionBits)
		out[2] = byte((exactHalf + int32(r0[2])*k0 + int32(r1[2])*k1 + int32(r2[2])*k2 + int32(r3[2])*k3 + int32(r4[2])*k4) >> precisionBits)
		out[3] = 0
		out, r0, r1, r2, r3, r4 = out[4:], r0[4:], r1[4:], r2[4:], r3[4:], r4[4:]
	}
}

func horizFast5(out, sp []uint64, start []int32, kk []uint64) {
	start = start[:len(out)]
	kk = kk[:len(out)*5]
	for xx, x0 := range start {
		x := int(x0)
		p := sp[x : x+5]
		k := kk[xx*5 : xx*5+5]
		k0, k1, k2, k3, k4 := k[0], k[1], k[2], k[3], k[4]
		out[xx] = (fastHalf + p[0]*k0 + p[1]*k1 + p[2]*k2 + p[3]*k3 + p[4]*k4) >> fastBits & laneMask
	}
}

func vertFast5(out []byte, rows [][]uint64, kk []uint64) {
	n := len(out) / 4
	r0, r1, r2, r3, r4 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n], rows[4][:n]
	k0, k1, k2, k3, k4 := kk[0], kk[1], kk[2], kk[3], kk[4]
	for x := range r0 {
		v := (fastHalf + r0[x]*k0 + r1[x]*k1 + r2[x]*k2 + r3[x]*k3 + r4[x]*k4) >> fastBits
		o := out[x*4 : x*4+4 : x*4+4]
		o[0], o[1], o[2], o[3] = byte(v), byte(v>>laneG), byte(v>>laneR), 0
	}
}

func horizExact6(out, row []byte, start, kk []int32) {
	start = start[:len(out)/4]
	kk = kk[:len(start)*6]
	for xx, x0 := range start {
		x := int(x0) * 4
		p := row[x : x+24]
		k := kk[xx*6 : xx*6+6]
		k0, k1, k2, k3, k4, k5 := k[0], k[1], k[2], k[3], k[4], k[5]
		o := out[xx*4 : xx*4+4]
		o[0] = byte((exactHalf + int32(p[0])*k0 + int32(p[4])*k1 + int32(p[8])*k2 + int32(p[12])*k3 + int32(p[16])*k4 + int32(p[20])*k5) >> precisionBits)
		o[1] = byte((exactHalf + int32(p[1])*k0 + int32(p[5])*k1 + int32(p[9])*k2 + int32(p[13])*k3 + int32(p[17])*k4 + int32(p[21])*k5) >> precisionBits)
		o[2] = byte((exactHalf + int32(p[2])*k0 + int32(p[6])*k1 + int32(p[10])*k2 + int32(p[14])*k3 + int32(p[18])*k4 + int32(p[22])*k5) >> precisionBits)
		o[3] = 0
	}
}

func vertExact6(out []byte, rows [][]byte, kk []int32) {
	r0, r1, r2, r3, r4, r5 := rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]
	k0, k1, k2, k3, k4, k5 := kk[0], kk[1], kk[2], kk[3], kk[4], kk[5]
	for len(out) >= 4 && len(r0) >= 4 && len(r1) >= 4 && len(r2) >= 4 && len(r3) >= 4 && len(r4) >= 4 && len(r5) >= 4 {
		out[0] = byte((exactHalf + int32(r0[0])*k0 + int32(r1[0])*k1 + int32(r2[0])*k2 + int32(r3[0])*k3 + int32(r4[0])*k4 + int32(r5[0])*k5) >> precisionBits)
		out[1] = byte((exactHalf + int32(r0[1])*k0 + int32(r1[1])*k1 + int32(r2[1])*k2 + int32(r3[1])*k3 + int32(r4[1])*k4 + int32(r5[1])*k5) >> precisionBits)
		out[2] = byte((exactHalf + int32(r0[2])*k0 + int32(r1[2])*k1 + int32(r2[2])*k2 + int32(r3[2])*k3 + int32(r4[2])*k4 + int32(r5[2])*k5) >> precisionBits)
		out[3] = 0
		out, r0, r1, r2, r3, r4, r5 = out[4:], r0[4:], r1[4:], r2[4:], r3[4:], r4[4:], r5[4:]
	}
}

func horizFast6(out, sp []uint64, start []int32, kk []uint64) {
	start = start[:len(out)]
	kk = kk[:len(out)*6]
	for xx, x0 := range start {
		x := int(x0)
		p := sp[x : x+6]
		k := kk[xx*6 : xx*6+6]
		k0, k1, k2, k3, k4, k5 := k[0], k[1], k[2], k[3], k[4], k[5]
		out[xx] = (fastHalf + p[0]*k0 + p[1]*k1 + p[2]*k2 + p[3]*k3 + p[4]*k4 + p[5]*k5) >> fastBits & laneMask
	}
}

func vertFast6(out []byte, rows [][]uint64, kk []uint64) {
	n := len(out) / 4
	r0, r1, r2, r3, r4, r5 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n], rows[4][:n], rows[5][:n]
	k0, k1, k2, k3, k4, k5 := kk[0], kk[1], kk[2], kk[3], kk[4], kk[5]
	for x := range r0 {
		v := (fastHalf + r0[x]*k0 + r1[x]*k1 + r2[x]*k2 + r3[x]*k3 + r4[x]*k4 + r5[x]*k5) >> fastBits
		o := out[x*4 : x*4+4 : x*4+4]
		o[0], o[1], o[2], o[3] = byte(v), byte(v>>laneG), byte(v>>laneR), 0
	}
}

func horizExactLanes2(out []lanes, row []byte, start, kk []int32) {
	full := len(start) / 2
	out = out[:(len(start)+1)/2]
	for p := 0; p < full; p++ {
		var a, b, g0, g1 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+8]
			k := kk[(2*p)*2 : (2*p)*2+2]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		{
			x := int(start[2*p+1]) * 4
			q := row[x : x+8]
			k := kk[(2*p+1)*2 : (2*p+1)*2+2]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1]) >> precisionBits
			b = uint64(cb) | uint64(cr)<<32
			g1 = uint64(cg)
		}
		out[p] = lanes{a, b, g0 | g1<<32}
	}
	if full < len(out) {
		p := full
		var a, g0 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+8]
			k := kk[(2*p)*2 : (2*p)*2+2]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		out[p] = lanes{a, 0, g0}
	}
}

func vertExactLanes2(out []byte, rows [][]lanes, kk []int32) {
	npx := len(out) / 4
	np := (npx + 1) / 2
	out = out[:npx*4]
	r0, r1 := rows[0][:np], rows[1][:np]
	k0, k1 := uint64(kk[0]), uint64(kk[1])
	for p := range r0 {
		a := exactHalf2 + r0[p][0]*k0 + r1[p][0]*k1
		b := exactHalf2 + r0[p][1]*k0 + r1[p][1]*k1
		g := exactHalf2 + r0[p][2]*k0 + r1[p][2]*k1
		storePair(out, p, a, b, g)
	}
}

func horizExactLanes3(out []lanes, row []byte, start, kk []int32) {
	full := len(start) / 2
	out = out[:(len(start)+1)/2]
	for p := 0; p < full; p++ {
		var a, b, g0, g1 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+12]
			k := kk[(2*p)*3 : (2*p)*3+3]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		{
			x := int(start[2*p+1]) * 4
			q := row[x : x+12]
			k := kk[(2*p+1)*3 : (2*p+1)*3+3]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2]) >> precisionBits
			b = uint64(cb) | uint64(cr)<<32
			g1 = uint64(cg)
		}
		out[p] = lanes{a, b, g0 | g1<<32}
	}
	if full < len(out) {
		p := full
		var a, g0 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+12]
			k := kk[(2*p)*3 : (2*p)*3+3]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		out[p] = lanes{a, 0, g0}
	}
}

func vertExactLanes3(out []byte, rows [][]lanes, kk []int32) {
	npx := len(out) / 4
	np := (npx + 1) / 2
	out = out[:npx*4]
	r0, r1, r2 := rows[0][:np], rows[1][:np], rows[2][:np]
	k0, k1, k2 := uint64(kk[0]), uint64(kk[1]), uint64(kk[2])
	for p := range r0 {
		a := exactHalf2 + r0[p][0]*k0 + r1[p][0]*k1 + r2[p][0]*k2
		b := exactHalf2 + r0[p][1]*k0 + r1[p][1]*k1 + r2[p][1]*k2
		g := exactHalf2 + r0[p][2]*k0 + r1[p][2]*k1 + r2[p][2]*k2
		storePair(out, p, a, b, g)
	}
}

func horizExactLanes4(out []lanes, row []byte, start, kk []int32) {
	full := len(start) / 2
	out = out[:(len(start)+1)/2]
	for p := 0; p < full; p++ {
		var a, b, g0, g1 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+16]
			k := kk[(2*p)*4 : (2*p)*4+4]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		{
			x := int(start[2*p+1]) * 4
			q := row[x : x+16]
			k := kk[(2*p+1)*4 : (2*p+1)*4+4]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3]) >> precisionBits
			b = uint64(cb) | uint64(cr)<<32
			g1 = uint64(cg)
		}
		out[p] = lanes{a, b, g0 | g1<<32}
	}
	if full < len(out) {
		p := full
		var a, g0 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+16]
			k := kk[(2*p)*4 : (2*p)*4+4]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		out[p] = lanes{a, 0, g0}
	}
}

func vertExactLanes4(out []byte, rows [][]lanes, kk []int32) {
	npx := len(out) / 4
	np := (npx + 1) / 2
	out = out[:npx*4]
	r0, r1, r2, r3 := rows[0][:np], rows[1][:np], rows[2][:np], rows[3][:np]
	k0, k1, k2, k3 := uint64(kk[0]), uint64(kk[1]), uint64(kk[2]), uint64(kk[3])
	for p := range r0 {
		a := exactHalf2 + r0[p][0]*k0 + r1[p][0]*k1 + r2[p][0]*k2 + r3[p][0]*k3
		b := exactHalf2 + r0[p][1]*k0 + r1[p][1]*k1 + r2[p][1]*k2 + r3[p][1]*k3
		g := exactHalf2 + r0[p][2]*k0 + r1[p][2]*k1 + r2[p][2]*k2 + r3[p][2]*k3
		storePair(out, p, a, b, g)
	}
}

func horizExactLanes5(out []lanes, row []byte, start, kk []int32) {
	full := len(start) / 2
	out = out[:(len(start)+1)/2]
	for p := 0; p < full; p++ {
		var a, b, g0, g1 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+20]
			k := kk[(2*p)*5 : (2*p)*5+5]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3] + int32(q[16])*k[4]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3] + int32(q[17])*k[4]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3] + int32(q[18])*k[4]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		{
			x := int(start[2*p+1]) * 4
			q := row[x : x+20]
			k := kk[(2*p+1)*5 : (2*p+1)*5+5]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3] + int32(q[16])*k[4]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3] + int32(q[17])*k[4]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3] + int32(q[18])*k[4]) >> precisionBits
			b = uint64(cb) | uint64(cr)<<32
			g1 = uint64(cg)
		}
		out[p] = lanes{a, b, g0 | g1<<32}
	}
	if full < len(out) {
		p := full
		var a, g0 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+20]
			k := kk[(2*p)*5 : (2*p)*5+5]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3] + int32(q[16])*k[4]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3] + int32(q[17])*k[4]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3] + int32(q[18])*k[4]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		out[p] = lanes{a, 0, g0}
	}
}

func vertExactLanes5(out []byte, rows [][]lanes, kk []int32) {
	npx := len(out) / 4
	np := (npx + 1) / 2
	out = out[:npx*4]
	r0, r1, r2, r3, r4 := rows[0][:np], rows[1][:np], rows[2][:np], rows[3][:np], rows[4][:np]
	k0, k1, k2, k3, k4 := uint64(kk[0]), uint64(kk[1]), uint64(kk[2]), uint64(kk[3]), uint64(kk[4])
	for p := range r0 {
		a := exactHalf2 + r0[p][0]*k0 + r1[p][0]*k1 + r2[p][0]*k2 + r3[p][0]*k3 + r4[p][0]*k4
		b := exactHalf2 + r0[p][1]*k0 + r1[p][1]*k1 + r2[p][1]*k2 + r3[p][1]*k3 + r4[p][1]*k4
		g := exactHalf2 + r0[p][2]*k0 + r1[p][2]*k1 + r2[p][2]*k2 + r3[p][2]*k3 + r4[p][2]*k4
		storePair(out, p, a, b, g)
	}
}

func horizExactLanes6(out []lanes, row []byte, start, kk []int32) {
	full := len(start) / 2
	out = out[:(len(start)+1)/2]
	for p := 0; p < full; p++ {
		var a, b, g0, g1 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+24]
			k := kk[(2*p)*6 : (2*p)*6+6]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3] + int32(q[16])*k[4] + int32(q[20])*k[5]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3] + int32(q[17])*k[4] + int32(q[21])*k[5]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3] + int32(q[18])*k[4] + int32(q[22])*k[5]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		{
			x := int(start[2*p+1]) * 4
			q := row[x : x+24]
			k := kk[(2*p+1)*6 : (2*p+1)*6+6]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3] + int32(q[16])*k[4] + int32(q[20])*k[5]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3] + int32(q[17])*k[4] + int32(q[21])*k[5]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3] + int32(q[18])*k[4] + int32(q[22])*k[5]) >> precisionBits
			b = uint64(cb) | uint64(cr)<<32
			g1 = uint64(cg)
		}
		out[p] = lanes{a, b, g0 | g1<<32}
	}
	if full < len(out) {
		p := full
		var a, g0 uint64
		{
			x := int(start[2*p]) * 4
			q := row[x : x+24]
			k := kk[(2*p)*6 : (2*p)*6+6]
			cb := (exactHalf + int32(q[0])*k[0] + int32(q[4])*k[1] + int32(q[8])*k[2] + int32(q[12])*k[3] + int32(q[16])*k[4] + int32(q[20])*k[5]) >> precisionBits
			cg := (exactHalf + int32(q[1])*k[0] + int32(q[5])*k[1] + int32(q[9])*k[2] + int32(q[13])*k[3] + int32(q[17])*k[4] + int32(q[21])*k[5]) >> precisionBits
			cr := (exactHalf + int32(q[2])*k[0] + int32(q[6])*k[1] + int32(q[10])*k[2] + int32(q[14])*k[3] + int32(q[18])*k[4] + int32(q[22])*k[5]) >> precisionBits
			a = uint64(cb) | uint64(cr)<<32
			g0 = uint64(cg)
		}
		out[p] = lanes{a, 0, g0}
	}
}

func vertExactLanes6(out []byte, rows [][]lanes, kk []int32) {
	npx := len(out) / 4
	np := (npx + 1) / 2
	out = out[:npx*4]
	r0, r1, r2, r3, r4, r5 := rows[0][:np], rows[1][:np], rows[2][:np], rows[3][:np], rows[4][:np], rows[5][:np]
	k0, k1, k2, k3, k4, k5 := uint64(kk[0]), uint64(kk[1]), uint64(kk[2]), uint64(kk[3]), uint64(kk[4]), uint64(kk[5])
	for p := range r0 {
		a := exactHalf2 + r0[p][0]*k0 + r1[p][0]*k1 + r2[p][0]*k2 + r3[p][0]*k3 + r4[p][0]*k4 + r5[p][0]*k5
		b := exactHalf2 + r0[p][1]*k0 + r1[p][1]*k1 + r2[p][1]*k2 + r3[p][1]*k3 + r4[p][1]*k4 + r5[p][1]*k5
		g := exactHalf2 + r0[p][2]*k0 + r1[p][2]*k1 + r2[p][2]*k2 + r3[p][2]*k3 + r4[p][2]*k4 + r5[p][2]*k5
		storePair(out, p, a, b, g)
	}
}
