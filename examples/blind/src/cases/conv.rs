//! Convolutions, pooling and image filters: the conv, depthwise and filter classes of the corpus.
//! Each reference spells out the kernel's layout (NCHW or NHWC, OIHW or HWIO filters) and its
//! border rule (zero padding by skipped taps, or coordinates clamped to the edge).

use super::*;
use crate::kernels;

/// The cases of this file, by kernel name.
pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("B2_AVGPOOL_NHWC", b2_avgpool_nhwc),
        ("B2_BOX_BLUR_RGBA", b2_box_blur_rgba),
        ("B2_CONV2D_NHWC", b2_conv2d_nhwc),
        ("B2_DEPTHWISE5X5", b2_depthwise5x5),
        ("B2_MAXPOOL2X2", b2_maxpool2x2),
        ("B2_SOBEL_MAGNITUDE", b2_sobel_magnitude),
        ("CONV1D_VALID", conv1d_valid),
        ("CONV2D_NCHW_STRIDE", conv2d_nchw_stride),
        ("DEPTHWISE_NHWC", depthwise_nhwc),
    ]
}

/// `base + delta` when it lies in `[0, len)`: a tap of zero padding is skipped.
fn tap(base: usize, delta: isize, len: usize) -> Option<usize> {
    base.checked_add_signed(delta).filter(|&v| v < len)
}

/// `base + delta` clamped to `[0, len)`: the edge pixel repeats.
fn clamped(base: usize, delta: isize, len: usize) -> usize {
    (base as isize + delta).clamp(0, len as isize - 1) as usize
}

fn b2_avgpool_nhwc(scale: Scale) -> Case {
    let (n, h, w, c) = scale.pick((16, 112, 112, 64), (2, 17, 21, 8));
    let (oh, ow) = ((h - 3) / 2 + 1, (w - 3) / 2 + 1);
    let mut rng = Rng::new(101);
    let x = rng.unit(n * h * w * c);
    let mut y = vec![0f32; n * oh * ow * c];
    // One row per (batch, output row): `ow * c` values, channels fastest.
    par_rows(&mut y, ow * c, |row, out| {
        let (b, oy) = (row / oh, row % oh);
        for ox in 0..ow {
            for ch in 0..c {
                let mut s = 0f64;
                for ky in 0..3 {
                    for kx in 0..3 {
                        let (iy, ix) = (oy * 2 + ky, ox * 2 + kx);
                        s += f64::from(x[((b * h + iy) * w + ix) * c + ch]);
                    }
                }
                out[ox * c + ch] = (s / 9.0) as f32;
            }
        }
    });
    Case {
        kernel: &kernels::B2_AVGPOOL_NHWC,
        sizes: vec![
            ("n", n as u64),
            ("h", h as u64),
            ("w", w as u64),
            ("c", c as u64),
        ],
        bindings: vec![
            ("x", storage(&x)),
            ("y", poisoned(n * oh * ow * c)),
            ("shape", uniform(&[u(n), u(h), u(w), u(c)])),
        ],
        checks: vec![check("y", y, POINTWISE)],
    }
}

fn b2_box_blur_rgba(scale: Scale) -> Case {
    let (w, h) = scale.pick((1920, 1080), (40, 30));
    let mut rng = Rng::new(102);
    // One vec4 (RGBA) per pixel.
    let src = rng.unit(w * h * 4);
    let mut dst = vec![0f32; w * h * 4];
    par_rows(&mut dst, w * 4, |y, out| {
        for x in 0..w {
            for ch in 0..4 {
                let mut s = 0f64;
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        let (sy, sx) = (clamped(y, dy, h), clamped(x, dx, w));
                        s += f64::from(src[(sy * w + sx) * 4 + ch]);
                    }
                }
                out[x * 4 + ch] = (s / 9.0) as f32;
            }
        }
    });
    Case {
        kernel: &kernels::B2_BOX_BLUR_RGBA,
        sizes: vec![("w", w as u64), ("h", h as u64)],
        bindings: vec![
            ("src", storage(&src)),
            ("dst", poisoned(w * h * 4)),
            ("image", uniform(&[u(w), u(h)])),
        ],
        checks: vec![check("dst", dst, POINTWISE)],
    }
}

fn b2_conv2d_nhwc(scale: Scale) -> Case {
    let (n, h, w, cin, cout) = scale.pick((8, 56, 56, 64, 64), (2, 12, 12, 8, 16));
    let mut rng = Rng::new(103);
    let inp = rng.unit(n * h * w * cin);
    // HWIO: [3, 3, cin, cout].
    let filt = rng.unit(9 * cin * cout);
    let bias = rng.unit(cout);
    let mut outp = vec![0f32; n * h * w * cout];
    // One row per (batch, output row): `w * cout` values, output channels fastest.
    par_rows(&mut outp, w * cout, |row, out| {
        let (b, oy) = (row / h, row % h);
        for ox in 0..w {
            for oc in 0..cout {
                let mut acc = f64::from(bias[oc]);
                for ky in 0..3 {
                    for kx in 0..3 {
                        let (Some(iy), Some(ix)) = (tap(oy, ky - 1, h), tap(ox, kx - 1, w)) else {
                            continue;
                        };
                        let x_base = ((b * h + iy) * w + ix) * cin;
                        let w_base = (ky * 3 + kx) as usize * cin;
                        for ic in 0..cin {
                            acc += f64::from(inp[x_base + ic])
                                * f64::from(filt[(w_base + ic) * cout + oc]);
                        }
                    }
                }
                out[ox * cout + oc] = acc as f32;
            }
        }
    });
    Case {
        kernel: &kernels::B2_CONV2D_NHWC,
        sizes: vec![
            ("n", n as u64),
            ("h", h as u64),
            ("w", w as u64),
            ("cin", cin as u64),
            ("cout", cout as u64),
        ],
        bindings: vec![
            ("inp", storage(&inp)),
            ("filt", storage(&filt)),
            ("bias", storage(&bias)),
            ("outp", poisoned(n * h * w * cout)),
            // `ConvParams` is five `i32`s.
            ("conv", uniform(&[i(n), i(h), i(w), i(cin), i(cout)])),
        ],
        checks: vec![check("outp", outp, ACCUMULATED)],
    }
}

fn b2_depthwise5x5(scale: Scale) -> Case {
    let (n, c, h, w) = scale.pick((8, 64, 112, 112), (2, 8, 20, 24));
    let mut rng = Rng::new(104);
    let x = rng.unit(n * c * h * w);
    let weights = rng.unit(c * 25);
    let mut y = vec![0f32; n * c * h * w];
    // One row per plane (batch, channel); no bias.
    par_rows(&mut y, h * w, |plane, out| {
        let ch = plane % c;
        let src = &x[plane * h * w..(plane + 1) * h * w];
        for oy in 0..h {
            for ox in 0..w {
                let mut acc = 0f64;
                for ky in 0..5 {
                    for kx in 0..5 {
                        let (Some(iy), Some(ix)) = (tap(oy, ky - 2, h), tap(ox, kx - 2, w)) else {
                            continue;
                        };
                        acc += f64::from(src[iy * w + ix])
                            * f64::from(weights[ch * 25 + (ky * 5 + kx) as usize]);
                    }
                }
                out[oy * w + ox] = acc as f32;
            }
        }
    });
    Case {
        kernel: &kernels::B2_DEPTHWISE5X5,
        sizes: vec![
            ("n", n as u64),
            ("c", c as u64),
            ("h", h as u64),
            ("w", w as u64),
        ],
        bindings: vec![
            ("x", storage(&x)),
            ("weights", storage(&weights)),
            ("y", poisoned(n * c * h * w)),
            ("params", uniform(&[u(n), u(c), u(h), u(w)])),
        ],
        checks: vec![check("y", y, ACCUMULATED)],
    }
}

fn b2_maxpool2x2(scale: Scale) -> Case {
    let (planes, h, w) = scale.pick((512, 112, 112), (6, 32, 40));
    let (oh, ow) = (h / 2, w / 2);
    let mut rng = Rng::new(105);
    let src = rng.unit(planes * h * w);
    let mut dst = vec![0f32; planes * oh * ow];
    for p in 0..planes {
        for r in 0..oh {
            for c in 0..ow {
                let at = |dr: usize, dc: usize| src[p * h * w + (2 * r + dr) * w + 2 * c + dc];
                dst[(p * oh + r) * ow + c] = at(0, 0).max(at(0, 1)).max(at(1, 0).max(at(1, 1)));
            }
        }
    }
    Case {
        kernel: &kernels::B2_MAXPOOL2X2,
        sizes: vec![("planes", planes as u64), ("h", h as u64), ("w", w as u64)],
        bindings: vec![
            ("src", storage(&src)),
            ("dst", poisoned(planes * oh * ow)),
            ("pool", uniform(&[u(planes), u(h), u(w)])),
        ],
        checks: vec![check("dst", dst, EXACT)],
    }
}

fn b2_sobel_magnitude(scale: Scale) -> Case {
    let (w, h) = scale.pick((1920, 1080), (48, 36));
    let mut rng = Rng::new(106);
    let img = rng.unit(w * h);
    let mut mag = vec![0f32; w * h];
    par_rows(&mut mag, w, |y, out| {
        for (x, o) in out.iter_mut().enumerate() {
            let px =
                |dx: isize, dy: isize| f64::from(img[clamped(y, dy, h) * w + clamped(x, dx, w)]);
            let gx = (px(1, -1) + 2.0 * px(1, 0) + px(1, 1))
                - (px(-1, -1) + 2.0 * px(-1, 0) + px(-1, 1));
            let gy = (px(-1, 1) + 2.0 * px(0, 1) + px(1, 1))
                - (px(-1, -1) + 2.0 * px(0, -1) + px(1, -1));
            *o = (gx * gx + gy * gy).sqrt() as f32;
        }
    });
    Case {
        kernel: &kernels::B2_SOBEL_MAGNITUDE,
        sizes: vec![("w", w as u64), ("h", h as u64)],
        bindings: vec![
            ("img", storage(&img)),
            ("mag", poisoned(w * h)),
            // `Size` is two `i32`s.
            ("size", uniform(&[i(w), i(h)])),
        ],
        checks: vec![check("mag", mag, POINTWISE)],
    }
}

fn conv1d_valid(scale: Scale) -> Case {
    let (batch, cin, cout, len, ks) = scale.pick((16, 64, 64, 4096, 5), (2, 8, 16, 100, 5));
    let lout = len - ks + 1;
    let mut rng = Rng::new(107);
    let x = rng.unit(batch * cin * len);
    let w = rng.unit(cout * cin * ks);
    let bias = rng.unit(cout);
    let mut y = vec![0f32; batch * cout * lout];
    // One row per (batch, output channel).
    par_rows(&mut y, lout, |row, out| {
        let (b, co) = (row / cout, row % cout);
        for (t, o) in out.iter_mut().enumerate() {
            let mut acc = f64::from(bias[co]);
            for ci in 0..cin {
                let xs = &x[(b * cin + ci) * len + t..][..ks];
                let ws = &w[(co * cin + ci) * ks..][..ks];
                acc += xs
                    .iter()
                    .zip(ws)
                    .map(|(a, b)| f64::from(*a) * f64::from(*b))
                    .sum::<f64>();
            }
            *o = acc as f32;
        }
    });
    Case {
        kernel: &kernels::CONV1D_VALID,
        sizes: vec![
            ("batch", batch as u64),
            ("cin", cin as u64),
            ("cout", cout as u64),
            ("len", len as u64),
            ("ks", ks as u64),
        ],
        bindings: vec![
            ("x", storage(&x)),
            ("w", storage(&w)),
            ("bias", storage(&bias)),
            ("y", poisoned(batch * cout * lout)),
            (
                "p",
                uniform(&[u(batch), u(cin), u(cout), u(len), u(ks), u(lout)]),
            ),
        ],
        checks: vec![check("y", y, ACCUMULATED)],
    }
}

fn conv2d_nchw_stride(scale: Scale) -> Case {
    let (batch, cin, cout, h, w) = scale.pick((8, 64, 128, 112, 112), (2, 4, 8, 17, 19));
    let (stride, pad) = (2, 1);
    let (oh, ow) = ((h - 1) / 2 + 1, (w - 1) / 2 + 1);
    let mut rng = Rng::new(108);
    let input = rng.unit(batch * cin * h * w);
    // OIHW: [cout, cin, 3, 3].
    let weight = rng.unit(cout * cin * 9);
    let bias = rng.unit(cout);
    let mut output = vec![0f32; batch * cout * oh * ow];
    // One row per output plane (batch, output channel).
    par_rows(&mut output, oh * ow, |plane, out| {
        let (n, co) = (plane / cout, plane % cout);
        for oy in 0..oh {
            for ox in 0..ow {
                let mut acc = f64::from(bias[co]);
                for ci in 0..cin {
                    let src = &input[(n * cin + ci) * h * w..][..h * w];
                    let wt = &weight[(co * cin + ci) * 9..][..9];
                    for ky in 0..3 {
                        let Some(iy) = tap(oy * stride, ky - pad, h) else {
                            continue;
                        };
                        for kx in 0..3 {
                            let Some(ix) = tap(ox * stride, kx - pad, w) else {
                                continue;
                            };
                            acc +=
                                f64::from(src[iy * w + ix]) * f64::from(wt[(ky * 3 + kx) as usize]);
                        }
                    }
                }
                out[oy * ow + ox] = acc as f32;
            }
        }
    });
    Case {
        kernel: &kernels::CONV2D_NCHW_STRIDE,
        sizes: vec![
            ("batch", batch as u64),
            ("cin", cin as u64),
            ("cout", cout as u64),
            ("h", h as u64),
            ("w", w as u64),
        ],
        bindings: vec![
            ("input", storage(&input)),
            ("weight", storage(&weight)),
            ("bias", storage(&bias)),
            ("output", poisoned(batch * cout * oh * ow)),
            (
                "conv",
                uniform(&[
                    u(batch),
                    u(cin),
                    u(cout),
                    u(h),
                    u(w),
                    u(oh),
                    u(ow),
                    u(stride),
                    u(pad as usize),
                ]),
            ),
        ],
        checks: vec![check("output", output, ACCUMULATED)],
    }
}

fn depthwise_nhwc(scale: Scale) -> Case {
    let (batch, h, w, channels) = scale.pick((8, 56, 56, 256), (2, 20, 21, 32));
    let mut rng = Rng::new(109);
    let x = rng.unit(batch * h * w * channels);
    // [3, 3, channels].
    let filter = rng.unit(9 * channels);
    let bias = rng.unit(channels);
    let mut y = vec![0f32; batch * h * w * channels];
    // One row per (batch, row): `w * channels` values, channels fastest.
    par_rows(&mut y, w * channels, |r, out| {
        let (n, row) = (r / h, r % h);
        for col in 0..w {
            for c in 0..channels {
                let mut acc = f64::from(bias[c]);
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        let (Some(iy), Some(ix)) = (tap(row, dy, h), tap(col, dx, w)) else {
                            continue;
                        };
                        let t = ((dy + 1) * 3 + dx + 1) as usize;
                        acc += f64::from(x[((n * h + iy) * w + ix) * channels + c])
                            * f64::from(filter[t * channels + c]);
                    }
                }
                out[col * channels + c] = acc as f32;
            }
        }
    });
    Case {
        kernel: &kernels::DEPTHWISE_NHWC,
        sizes: vec![
            ("batch", batch as u64),
            ("h", h as u64),
            ("w", w as u64),
            ("channels", channels as u64),
        ],
        bindings: vec![
            ("x", storage(&x)),
            ("dw_filter", storage(&filter)),
            ("bias", storage(&bias)),
            ("y", poisoned(batch * h * w * channels)),
            ("p", uniform(&[u(batch), u(h), u(w), u(channels)])),
        ],
        checks: vec![check("y", y, ACCUMULATED)],
    }
}
