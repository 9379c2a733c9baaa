//! The labelled corpus complexity classes are judged by: series of known shape, measured the way
//! the agent measures (5 samples a size, ±15% jitter, 8% outliers ×1.5–4, per-size medians, 6–8
//! sizes over 64×), each with the classes it may honestly be named. Shapes, acceptances and the
//! seed were fixed before the model was tuned against them; docs/complexity.md says why each
//! shape accepts what it does.

use slopewatch_core::complexity::Class;

/// The seed the corpus test asserts its targets at.
pub const SEED: u64 = 17;

/// Series made of each shape.
pub const SERIES_PER_SHAPE: usize = 40;

/// Samples measured at each size; the series keeps their median, as the server does.
const SAMPLES_PER_SIZE: usize = 5;

/// How much larger the largest size is than the smallest.
const SPAN: f64 = 64.0;

/// SplitMix64: a small, well-mixed generator, so the corpus is the same on every machine
/// without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform on [lo, hi), from the top 53 bits.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// Uniform on lo..=hi.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }
}

/// How a series' time grows with its size before noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Class(Class),
    /// t = a + b·n with a from 1 to 32 times b·n at the smallest size: the time still grows
    /// 2.9× to 16.5× over the range, but most of it late.
    FixedPlusLinear,
    /// t = b·n^1.5, which is no class.
    PowerOneAndHalf,
    /// t = b·n, ×1.6 above a size with at least two measured sizes on each side.
    CacheCliff,
    /// t = b·n, ×6 to ×50 above a size with at least two measured sizes on each side: a change
    /// of regime, as glibc's `memcpy` counted under Valgrind shows where it turns to `rep movsb`
    /// (×25 to ×45). A step is told from growth at ×4; the noise rarely takes more than ×1.5 off a jump.
    Step,
}

impl Shape {
    /// Every shape, in the order the confusion matrix lists them.
    pub const ALL: [Shape; 10] = [
        Shape::Class(Class::Constant),
        Shape::Class(Class::Log),
        Shape::Class(Class::Linear),
        Shape::Class(Class::NLogN),
        Shape::Class(Class::Quadratic),
        Shape::Class(Class::Cubic),
        Shape::FixedPlusLinear,
        Shape::PowerOneAndHalf,
        Shape::CacheCliff,
        Shape::Step,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Class(class) => class.label(),
            Shape::FixedPlusLinear => "fixed + n",
            Shape::PowerOneAndHalf => "n^1.5",
            Shape::CacheCliff => "cache cliff",
            Shape::Step => "step ×6–50",
        }
    }

    /// The classes a series of this shape may be named. `unsure` is never wrong, only counted.
    pub fn accepts(self) -> &'static [Class] {
        match self {
            Shape::Class(Class::Constant) => &[Class::Constant],
            Shape::Class(Class::Log) => &[Class::Log],
            Shape::Class(Class::Linear) => &[Class::Linear],
            Shape::Class(Class::NLogN) => &[Class::NLogN],
            Shape::Class(Class::Quadratic) => &[Class::Quadratic],
            Shape::Class(Class::Cubic) => &[Class::Cubic],
            Shape::FixedPlusLinear | Shape::CacheCliff | Shape::Step => &[Class::Linear, Class::NLogN],
            Shape::PowerOneAndHalf => &[Class::NLogN, Class::Quadratic],
        }
    }

    /// Linear work underneath, which must never be named O(n²) or worse.
    pub fn is_linear(self) -> bool {
        matches!(self, Shape::Class(Class::Linear) | Shape::FixedPlusLinear | Shape::CacheCliff | Shape::Step)
    }

    /// Quadratic work, which must never be named O(n) or better.
    pub fn is_quadratic(self) -> bool {
        self == Shape::Class(Class::Quadratic)
    }
}

/// One labelled series of (size, median time).
pub struct Series {
    pub shape: Shape,
    pub points: Vec<(f64, f64)>,
}

/// `SERIES_PER_SHAPE` series of every shape, from `seed`.
pub fn corpus(seed: u64) -> Vec<Series> {
    let mut rng = Rng::new(seed);
    let mut all = Vec::with_capacity(Shape::ALL.len() * SERIES_PER_SHAPE);
    for shape in Shape::ALL {
        for _ in 0..SERIES_PER_SHAPE {
            let sizes = rng.between(6, 8);
            all.push(Series { shape, points: series(shape, sizes, &mut rng) });
        }
    }
    all
}

/// A series of `shape` at `count` sizes spread evenly in log over 64×, the smallest a power of
/// two from 64 to 4096, each point the median of `SAMPLES_PER_SIZE` noisy samples.
pub fn series(shape: Shape, count: usize, rng: &mut Rng) -> Vec<(f64, f64)> {
    let smallest = 2f64.powi(rng.between(6, 12) as i32);
    let sizes: Vec<f64> = (0..count).map(|i| (smallest * SPAN.powf(i as f64 / (count - 1) as f64)).round()).collect();
    let scale = 10f64.powf(rng.uniform(0.0, 3.0));
    let growth = |n: f64| match shape {
        Shape::Class(Class::Constant) => 1.0,
        Shape::Class(Class::Log) => n.ln(),
        Shape::Class(Class::Linear) | Shape::FixedPlusLinear | Shape::CacheCliff | Shape::Step => n,
        Shape::Class(Class::NLogN) => n * n.ln(),
        Shape::Class(Class::Quadratic) => n * n,
        Shape::Class(Class::Cubic) => n * n * n,
        Shape::PowerOneAndHalf => n.powf(1.5),
    };
    let b = scale / growth(smallest);
    // Every program has some start-up cost; the pure shapes get up to 5% of their smallest time.
    let fixed = match shape {
        Shape::Class(Class::Constant) => 0.0,
        Shape::FixedPlusLinear => scale * 32f64.powf(rng.uniform(0.0, 1.0)),
        _ => scale * rng.uniform(0.0, 0.05),
    };
    let (cliff, rise) = match shape {
        Shape::CacheCliff | Shape::Step => {
            let below = rng.between(1, count - 3);
            let rise = if shape == Shape::Step { rng.uniform(6f64.ln(), 50f64.ln()).exp() } else { 1.6 };
            ((sizes[below] * sizes[below + 1]).sqrt(), rise)
        }
        _ => (f64::INFINITY, 1.0),
    };
    sizes
        .iter()
        .map(|&n| {
            let t = (fixed + b * growth(n)) * if n > cliff { rise } else { 1.0 };
            (n, median_of_samples(t, rng))
        })
        .collect()
}

/// The median of `SAMPLES_PER_SIZE` samples of a time `t`: each off by up to ±15%, and 8% of
/// them outliers 1.5 to 4 times slower.
fn median_of_samples(t: f64, rng: &mut Rng) -> f64 {
    let mut samples = [0.0; SAMPLES_PER_SIZE];
    for s in &mut samples {
        *s = t * rng.uniform(0.85, 1.15);
        if rng.uniform(0.0, 1.0) < 0.08 {
            *s *= rng.uniform(1.5, 4.0);
        }
    }
    samples.sort_by(f64::total_cmp);
    samples[SAMPLES_PER_SIZE / 2]
}

/// Beyond the corpus, where it is weakest: a fixed cost 64 to 256 times the linear part at the
/// smallest size (the time grows only 1.25–2× over 64×), or none of the growth at all (a flat
/// series), made like the corpus's series at 6–8 sizes. Neither may ever be named O(n²) or O(n³).
pub fn hidden_growth(seed: u64, count: usize) -> Vec<(bool, Vec<(f64, f64)>)> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|i| {
            let flat = i % 2 == 1;
            let sizes = rng.between(6, 8);
            let smallest = 2f64.powi(rng.between(6, 12) as i32);
            let scale = 10f64.powf(rng.uniform(0.0, 3.0));
            let fixed = if flat { scale } else { scale * 64f64 * 4f64.powf(rng.uniform(0.0, 1.0)) };
            let b = if flat { 0.0 } else { scale / smallest };
            let points = (0..sizes)
                .map(|k| {
                    let n = (smallest * SPAN.powf(k as f64 / (sizes - 1) as f64)).round();
                    (n, median_of_samples(fixed + b * n, &mut rng))
                })
                .collect();
            (flat, points)
        })
        .collect()
}

/// Instruction counts that change regime once, the same on every run, `SERIES_PER_SHAPE` of each
/// class from `seed`: made as `exact_counts` makes them, then ×4 to ×50 (or ÷4 to ÷50, as a counter
/// that counts `rep movsb` once would read it) from a size with at least two sizes on each side.
pub fn exact_steps(seed: u64) -> Vec<Series> {
    let mut rng = Rng::new(seed ^ 0x0051_57e9);
    exact_counts(seed)
        .into_iter()
        .map(|mut series| {
            let count = series.points.len();
            let from = rng.between(2, count - 2);
            let factor = rng.uniform(4f64.ln(), 50f64.ln()).exp();
            let factor = if rng.uniform(0.0, 1.0) < 0.25 { 1.0 / factor } else { factor };
            for p in &mut series.points[from..] {
                p.1 = (p.1 * factor).round().max(1.0);
            }
            series
        })
        .collect()
}

/// Instruction counts of each class, the same on every run, `SERIES_PER_SHAPE` of each from
/// `seed`: the class's own term, a lower-order term (ln n under n, n under n log n and n², n²
/// under n³) of up to half of it at the smallest size, and a fixed cost up to 5% of it or 1 to
/// 256 times it, at 5 to 8 sizes doubling or spread over 64× from 64 B–4 KiB, in whole counts.
pub fn exact_counts(seed: u64) -> Vec<Series> {
    let mut rng = Rng::new(seed);
    let mut all = Vec::with_capacity(Class::ALL.len() * SERIES_PER_SHAPE);
    for class in Class::ALL {
        for _ in 0..SERIES_PER_SHAPE {
            let count = rng.between(5, 8);
            let smallest = 2f64.powi(rng.between(6, 12) as i32);
            let step = if rng.uniform(0.0, 1.0) < 0.5 { 2.0 } else { SPAN.powf(1.0 / (count - 1) as f64) };
            let scale = 10f64.powf(rng.uniform(3.0, 6.0));
            let lower = rng.uniform(0.0, 0.5);
            let fixed = match class {
                Class::Constant => 0.0,
                _ if rng.uniform(0.0, 1.0) < 0.5 => rng.uniform(0.0, 0.05),
                _ => 256f64.powf(rng.uniform(0.0, 1.0)),
            };
            // The class's term and the lower-order one, each 1 at the smallest size.
            let terms = |n: f64| -> (f64, f64) {
                let (n0, r) = (smallest, n / smallest);
                match class {
                    Class::Constant => (1.0, 0.0),
                    Class::Log => (n.ln() / n0.ln(), 0.0),
                    Class::Linear => (r, n.ln() / n0.ln()),
                    Class::NLogN => (r * n.ln() / n0.ln(), r),
                    Class::Quadratic => (r * r, r),
                    Class::Cubic => (r * r * r, r * r),
                }
            };
            let points = (0..count)
                .map(|i| {
                    let n = (smallest * step.powi(i as i32)).round();
                    let (own, below) = terms(n);
                    (n, (scale * (fixed + own + lower * below)).round())
                })
                .collect();
            all.push(Series { shape: Shape::Class(class), points });
        }
    }
    all
}
