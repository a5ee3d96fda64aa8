//! A network's architecture: the sequence of layers a batch flows through, with every shape
//! fixed when it is built. Activations between layers are matrices of one row per sample; a
//! layer that sees images reads each row as channels × height × width, channel-major.

use crate::config::Activation;
use crate::TrainError;

/// One layer of the sequence.
#[derive(Clone, Debug, PartialEq)]
pub enum Layer {
    /// y = x·Wᵀ + b, W of `outputs` × `inputs`.
    Dense {
        inputs: usize,
        outputs: usize,
    },
    /// A 2-D convolution, stride 1, `pad` zeros around each image: `filters` kernels of
    /// `channels` × `kernel` × `kernel` (weights `filters` × channels·kernel², one bias each).
    Conv {
        channels: usize,
        height: usize,
        width: usize,
        filters: usize,
        kernel: usize,
        pad: usize,
    },
    /// The maximum of each `size` × `size` window, stride `size`.
    MaxPool {
        channels: usize,
        height: usize,
        width: usize,
        size: usize,
    },
    /// Maxout (seed 002 §7): unit u is the maximum of inputs u·pieces .. (u+1)·pieces − 1.
    Maxout {
        units: usize,
        pieces: usize,
    },
    Activation(Activation),
    /// Inverted dropout: in training each input is kept with probability 1 − p and scaled by
    /// 1/(1 − p); at test time the layer passes its input on.
    Dropout {
        p: f64,
    },
}

impl Layer {
    /// Inputs and outputs per sample.
    pub fn sizes(&self, inputs: usize) -> (usize, usize) {
        let out = match *self {
            Layer::Dense { outputs, .. } => outputs,
            Layer::Conv {
                height,
                width,
                filters,
                kernel,
                pad,
                ..
            } => filters * (height + 2 * pad + 1 - kernel) * (width + 2 * pad + 1 - kernel),
            Layer::MaxPool {
                channels,
                height,
                width,
                size,
            } => channels * (height / size) * (width / size),
            Layer::Maxout { units, .. } => units,
            Layer::Activation(_) | Layer::Dropout { .. } => inputs,
        };
        (inputs, out)
    }

    /// The weight matrix (rows, cols) of a layer with parameters.
    pub fn weights(&self) -> Option<(usize, usize)> {
        match *self {
            Layer::Dense { inputs, outputs } => Some((outputs, inputs)),
            Layer::Conv {
                channels,
                filters,
                kernel,
                ..
            } => Some((filters, channels * kernel * kernel)),
            _ => None,
        }
    }

    fn describe(&self) -> String {
        match self {
            Layer::Dense { outputs, .. } => format!("dense {outputs}"),
            Layer::Conv {
                filters,
                kernel,
                pad,
                ..
            } => format!("conv {filters}x{kernel}x{kernel} pad {pad}"),
            Layer::MaxPool { size, .. } => format!("maxpool {size}"),
            Layer::Maxout { units, pieces } => format!("maxout {units}x{pieces}"),
            Layer::Activation(a) => format!("{a:?}").to_lowercase(),
            Layer::Dropout { p } => format!("dropout {p}"),
        }
    }
}

/// A network: the input image shape, the layers, and the classes the last layer scores.
#[derive(Clone, Debug, PartialEq)]
pub struct Arch {
    /// A short name for titles (`784-512-10 sigmoid MLP`, `LeNet-5`).
    pub name: String,
    /// Channels, height, width of an input sample.
    pub input: (usize, usize, usize),
    pub layers: Vec<Layer>,
    /// `--model gpt`: the transformer (`layers` is then empty; `crate::transformer`).
    pub gpt: Option<crate::transformer::Gpt>,
}

/// The seeds' networks, by `--model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    Mlp,
    Lenet5,
    Maxout,
    /// A decoder-only transformer ([`Arch::gpt`]).
    Gpt,
    /// A vision transformer ([`Arch::gpt`] with `Task::Image`).
    Vit,
}

impl std::str::FromStr for ModelKind {
    type Err = TrainError;
    fn from_str(s: &str) -> Result<ModelKind, TrainError> {
        match s {
            "mlp" => Ok(ModelKind::Mlp),
            "lenet5" => Ok(ModelKind::Lenet5),
            "maxout" => Ok(ModelKind::Maxout),
            "gpt" => Ok(ModelKind::Gpt),
            "vit" => Ok(ModelKind::Vit),
            _ => Err(TrainError(format!(
                "unknown model {s:?}: expected mlp, lenet5, maxout, gpt or vit"
            ))),
        }
    }
}

/// What `--model`, `--hidden`, `--activation`, `--maxout-k` and `--dropout` ask for.
#[derive(Clone, Debug, PartialEq)]
pub struct ArchOptions {
    pub kind: ModelKind,
    pub hidden: Vec<usize>,
    pub activation: Activation,
    pub maxout_pieces: usize,
    /// Dropout probabilities: the first on the input, then one after each hidden layer; a
    /// missing entry is 0 (no dropout layer).
    pub dropout: Vec<f64>,
}

impl Arch {
    /// A plain MLP (no dropout) on `input` images.
    pub fn mlp(
        input: (usize, usize, usize),
        hidden: &[usize],
        activation: Activation,
        classes: usize,
    ) -> Arch {
        let options = ArchOptions {
            kind: ModelKind::Mlp,
            hidden: hidden.to_vec(),
            activation,
            maxout_pieces: 2,
            dropout: vec![],
        };
        Arch::build(&options, input, classes).expect("an MLP without dropout always builds")
    }

    /// The network of `o` for inputs of `input` (channels, height, width) and `classes`.
    pub fn build(
        o: &ArchOptions,
        input: (usize, usize, usize),
        classes: usize,
    ) -> Result<Arch, TrainError> {
        if let Some(p) = o.dropout.iter().find(|p| !(0.0..1.0).contains(*p)) {
            return Err(TrainError(format!(
                "--dropout {p} is not a probability in [0, 1)"
            )));
        }
        let drop = |i: usize, layers: &mut Vec<Layer>| {
            if let Some(&p) = o.dropout.get(i).filter(|&&p| p > 0.0) {
                layers.push(Layer::Dropout { p });
            }
        };
        let flat = input.0 * input.1 * input.2;
        let mut layers = vec![];
        drop(0, &mut layers);
        let name = match o.kind {
            ModelKind::Gpt | ModelKind::Vit => {
                return Err(TrainError(
                    "--model gpt and vit are built by Arch::gpt".into(),
                ))
            }
            ModelKind::Mlp | ModelKind::Maxout => {
                let maxout = o.kind == ModelKind::Maxout;
                let pieces = if maxout { o.maxout_pieces } else { 1 };
                if maxout && pieces < 2 {
                    return Err(TrainError(format!(
                        "--maxout-k {pieces}: a maxout unit takes the maximum of at least 2 pieces"
                    )));
                }
                let mut inputs = flat;
                for (i, &h) in o.hidden.iter().enumerate() {
                    layers.push(Layer::Dense {
                        inputs,
                        outputs: h * pieces,
                    });
                    layers.push(if maxout {
                        Layer::Maxout { units: h, pieces }
                    } else {
                        Layer::Activation(o.activation)
                    });
                    drop(i + 1, &mut layers);
                    inputs = h;
                }
                layers.push(Layer::Dense {
                    inputs,
                    outputs: classes,
                });
                let widths: Vec<String> = std::iter::once(flat)
                    .chain(o.hidden.iter().copied())
                    .chain([classes])
                    .map(|n| n.to_string())
                    .collect();
                if maxout {
                    format!("{} maxout-{pieces} network", widths.join("-"))
                } else {
                    let act = format!("{:?}", o.activation).to_lowercase();
                    format!("{} {act} MLP", widths.join("-"))
                }
            }
            ModelKind::Lenet5 => {
                if (input.1, input.2) != (28, 28) || input.0 != 1 {
                    return Err(TrainError(format!(
                        "--model lenet5 takes 28x28 single-channel images, not {}x{}",
                        input.1, input.2
                    )));
                }
                // Seed 004 Listing A.2: conv 6@5x5 pad 2, pool 2, ReLU; conv 16@5x5, pool 2,
                // ReLU; conv 120@5x5, ReLU; dense 84, ReLU; dense 10.
                let relu = Layer::Activation(Activation::Relu);
                layers.extend([
                    Layer::Conv {
                        channels: 1,
                        height: 28,
                        width: 28,
                        filters: 6,
                        kernel: 5,
                        pad: 2,
                    },
                    Layer::MaxPool {
                        channels: 6,
                        height: 28,
                        width: 28,
                        size: 2,
                    },
                    relu.clone(),
                    Layer::Conv {
                        channels: 6,
                        height: 14,
                        width: 14,
                        filters: 16,
                        kernel: 5,
                        pad: 0,
                    },
                    Layer::MaxPool {
                        channels: 16,
                        height: 10,
                        width: 10,
                        size: 2,
                    },
                    relu.clone(),
                    Layer::Conv {
                        channels: 16,
                        height: 5,
                        width: 5,
                        filters: 120,
                        kernel: 5,
                        pad: 0,
                    },
                    relu.clone(),
                ]);
                drop(1, &mut layers);
                layers.extend([
                    Layer::Dense {
                        inputs: 120,
                        outputs: 84,
                    },
                    relu,
                ]);
                drop(2, &mut layers);
                layers.push(Layer::Dense {
                    inputs: 84,
                    outputs: classes,
                });
                "LeNet-5".into()
            }
        };
        let arch = Arch {
            name,
            input,
            layers,
            gpt: None,
        };
        arch.check()?;
        Ok(arch)
    }

    /// Checks that every layer's input size is its predecessor's output size, and that every
    /// window fits: a convolution's kernel at most its padded image and its padding below
    /// the kernel (the input gradient pads by kernel − 1 − pad), a pool's window at least 1.
    pub fn check(&self) -> Result<(), TrainError> {
        let mut n = self.input.0 * self.input.1 * self.input.2;
        for (i, l) in self.layers.iter().enumerate() {
            let fits = match *l {
                Layer::Conv {
                    height,
                    width,
                    kernel,
                    pad,
                    ..
                } => kernel >= 1 && pad < kernel && kernel <= height.min(width) + 2 * pad,
                Layer::MaxPool {
                    height,
                    width,
                    size,
                    ..
                } => size >= 1 && size <= height.min(width),
                _ => true,
            };
            if !fits {
                return Err(TrainError(format!(
                    "layer {i} ({}) does not fit its input (an architecture bug)",
                    l.describe()
                )));
            }
            let want = match *l {
                Layer::Dense { inputs, .. } => inputs,
                Layer::Conv {
                    channels,
                    height,
                    width,
                    ..
                }
                | Layer::MaxPool {
                    channels,
                    height,
                    width,
                    ..
                } => channels * height * width,
                Layer::Maxout { units, pieces } => units * pieces,
                Layer::Activation(_) | Layer::Dropout { .. } => n,
            };
            if want != n {
                return Err(TrainError(format!(
                    "layer {i} ({}) takes {want} inputs but receives {n} (an architecture bug)",
                    l.describe()
                )));
            }
            n = l.sizes(n).1;
        }
        Ok(())
    }

    /// The transformer `g` (its checks: `Gpt::check`).
    pub fn gpt(g: crate::transformer::Gpt) -> Result<Arch, TrainError> {
        g.check()?;
        let input = match g.task {
            crate::transformer::Task::Text => (1, 1, g.context),
            crate::transformer::Task::Image { side, .. } => (1, side, side),
        };
        Ok(Arch {
            name: g.name(),
            input,
            layers: vec![],
            gpt: Some(g),
        })
    }

    /// Whether the network is a gpt, whose data are token windows of a text.
    pub fn reads_text(&self) -> bool {
        self.gpt
            .is_some_and(|g| g.task == crate::transformer::Task::Text)
    }

    /// Outputs per sample of the last layer.
    pub fn classes(&self) -> usize {
        if let Some(g) = &self.gpt {
            return g.vocab;
        }
        let mut n = self.input.0 * self.input.1 * self.input.2;
        for l in &self.layers {
            n = l.sizes(n).1;
        }
        n
    }

    /// The weight shapes of the layers with parameters, in order.
    pub fn weight_shapes(&self) -> Vec<(usize, usize)> {
        if let Some(g) = &self.gpt {
            return g.shapes().iter().map(|s| (s.0, s.1)).collect();
        }
        self.layers.iter().filter_map(Layer::weights).collect()
    }

    /// Every weight of the network.
    pub fn weight_count(&self) -> usize {
        self.weight_shapes().iter().map(|(r, c)| r * c).sum()
    }

    /// A stable description of every layer (part of a checkpoint's fingerprint).
    pub fn describe(&self) -> String {
        if let Some(g) = &self.gpt {
            return g.describe();
        }
        let layers: Vec<String> = self.layers.iter().map(Layer::describe).collect();
        format!(
            "{}x{}x{}: {}",
            self.input.0,
            self.input.1,
            self.input.2,
            layers.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(kind: ModelKind, hidden: &[usize], dropout: &[f64]) -> ArchOptions {
        ArchOptions {
            kind,
            hidden: hidden.to_vec(),
            activation: Activation::Sigmoid,
            maxout_pieces: 5,
            dropout: dropout.to_vec(),
        }
    }

    #[test]
    fn the_seeds_networks_have_their_shapes() {
        let mlp = Arch::build(&options(ModelKind::Mlp, &[512], &[]), (1, 28, 28), 10).unwrap();
        assert_eq!(mlp.name, "784-512-10 sigmoid MLP");
        assert_eq!(mlp.weight_shapes(), vec![(512, 784), (10, 512)]);
        let lenet = Arch::build(&options(ModelKind::Lenet5, &[], &[]), (1, 28, 28), 10).unwrap();
        assert_eq!(
            lenet.weight_shapes(),
            vec![(6, 25), (16, 150), (120, 400), (84, 120), (10, 84)]
        );
        // Seed 004: "about 0.06 million parameters" (61,706 with biases).
        let biases: usize = lenet.weight_shapes().iter().map(|s| s.0).sum();
        assert_eq!(lenet.weight_count() + biases, 61_706);
        assert_eq!(lenet.classes(), 10);
        let maxout = Arch::build(
            &options(ModelKind::Maxout, &[240, 240], &[0.2, 0.5, 0.5]),
            (1, 28, 28),
            10,
        )
        .unwrap();
        assert_eq!(
            maxout.weight_shapes(),
            vec![(1200, 784), (1200, 240), (10, 240)]
        );
        assert_eq!(
            maxout
                .layers
                .iter()
                .filter(|l| matches!(l, Layer::Dropout { .. }))
                .count(),
            3
        );
    }

    #[test]
    fn impossible_networks_are_refused() {
        let e = Arch::build(&options(ModelKind::Lenet5, &[], &[]), (1, 14, 14), 10);
        assert!(e.unwrap_err().0.contains("28x28"));
        let e = Arch::build(&options(ModelKind::Mlp, &[8], &[1.0]), (1, 4, 4), 10);
        assert!(e.unwrap_err().0.contains("not a probability"));
        let mut o = options(ModelKind::Maxout, &[8], &[]);
        o.maxout_pieces = 1;
        assert!(Arch::build(&o, (1, 4, 4), 10)
            .unwrap_err()
            .0
            .contains("at least 2"));
        let conv = |kernel, pad| Arch {
            name: "conv".into(),
            gpt: None,
            input: (1, 4, 4),
            layers: vec![Layer::Conv {
                channels: 1,
                height: 4,
                width: 4,
                filters: 1,
                kernel,
                pad,
            }],
        };
        assert!(conv(3, 1).check().is_ok());
        for (kernel, pad) in [(9, 0), (3, 3), (0, 0)] {
            let e = conv(kernel, pad).check().unwrap_err().0;
            assert!(e.contains("does not fit"), "{kernel} {pad}: {e}");
        }
    }
}
