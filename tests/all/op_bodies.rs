//! Every op of `model::ops`: each backend's body against the op's reference body, on odd shapes
//! (widths and heads that divide nothing a kernel tiles by). The CPU's bodies run natively, the
//! browser's CPU body too (its weights packed as the browser's loader packs them), and the GPU's
//! on wgpu where an adapter is found (lavapipe here). A layer whose weights are laid out for
//! another backend is refused with the reason.

use burn::tensor::{Device, Int, Tensor, TensorData};
use clozelab::model::ModelError;
use clozelab::model::ops::CacheStorage;
use clozelab::model::ops::attention::{StepAttention, StepInputs};
use clozelab::model::ops::backend::{Backend, Op};
use clozelab::model::ops::draw::DrawTokens;
use clozelab::model::ops::embedding::{EmbedTokens, LmHead, StoreEmbedding, TokenEmbedding};
use clozelab::model::ops::gelu::GeluNew;
use clozelab::model::ops::kernels::MAX_HEAD_DIM;
use clozelab::model::ops::layer_norm::LayerNormOp;
use clozelab::model::ops::projection::{Conv1D, Project, StoreProjection, Then};
use clozelab::model::ops::qkv::ProjectQkv;
use clozelab::model::ops::residual_norm::ProjectResidualNorm;

use crate::common;
use crate::gpu_kernels::{read, tensor};

/// Deterministic values in [-scale, scale) (scripts/reference_ops.py draws the same).
pub(crate) fn values(count: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(7);
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// The backends whose bodies run here, each with its device: the GPU's only where wgpu finds an
/// adapter.
pub(crate) fn backends() -> Vec<(Backend, Device)> {
    let mut all = vec![
        (Backend::Cpu, Device::flex()),
        (Backend::BrowserCpu, Device::flex()),
    ];
    if let Some(gpu) = common::wgpu_or_skip() {
        all.push((Backend::Gpu, gpu.device));
    }
    all
}

/// Weights made once per backend (each laid out for it, on its device), found by backend: the
/// reference's (the native CPU's) first.
struct PerBackend<T>(Vec<(Backend, T)>);

impl<T> PerBackend<T> {
    fn new(make: impl Fn(Backend, &Device) -> T) -> Self {
        let all = std::iter::once((Backend::Cpu, Device::flex())).chain(backends());
        Self(
            all.map(|(backend, device)| (backend, make(backend, &device)))
                .collect(),
        )
    }

    fn of(&self, backend: Backend) -> &T {
        &self
            .0
            .iter()
            .find(|(b, _)| *b == backend)
            .expect("one per backend")
            .1
    }
}

/// Holds every backend's body of the op that `make` builds (for a backend, on its device)
/// against the reference body of the op built for the native CPU.
fn bodies_agree<O: Op>(
    what: &str,
    make: impl Fn(Backend, &Device) -> O,
    read: impl Fn(O::Output) -> Vec<f32>,
    tolerance: f32,
) {
    let want = read(make(Backend::Cpu, &Device::flex()).reference());
    assert!(!want.is_empty(), "{what}: the reference gave nothing");
    for (backend, device) in backends() {
        let got = read(backend.run(make(backend, &device)));
        assert_eq!(got.len(), want.len(), "{what}: {backend:?}'s body's size");
        let worst = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g - w).abs() / w.abs().max(1.0))
            .fold(0.0f32, f32::max);
        assert!(
            worst <= tolerance,
            "{what}: {backend:?}'s body differs from the reference by {worst:e}"
        );
    }
}

/// A projection `[n_in, n_out]` laid out for `backend` on `device`.
fn conv(backend: Backend, n_in: usize, n_out: usize, seed: u64, device: &Device) -> Conv1D {
    let bias =
        burn::module::Param::from_tensor(tensor(&values(n_out, seed + 1, 0.5), [n_out], device));
    Conv1D::new(
        backend,
        values(n_in * n_out, seed, 0.4),
        [n_in, n_out],
        bias,
        device,
    )
    .unwrap()
}

#[test]
fn layer_norm_and_gelu_bodies_equal_their_references() {
    let (rows, width) = (5, 13);
    let input = values(rows * width, 1, 3.0);
    let (weight, bias) = (values(width, 2, 1.5), values(width, 3, 0.5));
    bodies_agree(
        "layer norm",
        |_, device| LayerNormOp {
            input: tensor(&input, [1, rows, width], device),
            weight: tensor(&weight, [width], device),
            bias: tensor(&bias, [width], device),
            epsilon: 1e-5,
        },
        read,
        2e-6,
    );
    let x = values(7 * 19, 4, 9.0);
    bodies_agree(
        "gelu",
        |_, device| GeluNew(tensor(&x, [7, 19], device)),
        read,
        2e-6,
    );
}

#[test]
fn projection_bodies_equal_their_references() {
    let (n_in, n_out, batch, seq) = (13, 21, 2, 3);
    let input = values(batch * seq * n_in, 5, 1.0);
    let residual = values(batch * seq * n_out, 6, 2.0);
    for then in ["nothing", "gelu", "residual"] {
        let layers = PerBackend::new(|backend, device| conv(backend, n_in, n_out, 7, device));
        bodies_agree(
            &format!("projection then {then}"),
            |backend, device| Project {
                layer: layers.of(backend),
                input: tensor(&input, [batch, seq, n_in], device),
                then: match then {
                    "nothing" => Then::Nothing,
                    "gelu" => Then::Gelu,
                    _ => Then::Residual(Box::new(tensor(&residual, [batch, seq, n_out], device))),
                },
            },
            |output| read(output.unwrap()),
            3e-6,
        );
    }
}

#[test]
fn projection_residual_and_norm_bodies_equal_their_references() {
    // Odd widths, and GPT-2's multiple of 64.
    for (n_in, n_out, batch, seq) in [(13, 21, 2, 3), (24, 64, 1, 2)] {
        let input = values(batch * seq * n_in, 11, 1.0);
        let residual = values(batch * seq * n_out, 12, 2.0);
        let (weight, bias) = (values(n_out, 13, 1.5), values(n_out, 14, 0.5));
        let layers = PerBackend::new(|backend, device| conv(backend, n_in, n_out, 15, device));
        for (half, name) in [(0, "sum"), (1, "norm")] {
            bodies_agree(
                &format!("projection, residual and norm ({n_in}→{n_out}): the {name}"),
                |backend, device| ProjectResidualNorm {
                    layer: layers.of(backend),
                    input: tensor(&input, [batch, seq, n_in], device),
                    residual: tensor(&residual, [batch, seq, n_out], device),
                    norm_weight: tensor(&weight, [n_out], device),
                    norm_bias: tensor(&bias, [n_out], device),
                    epsilon: 1e-5,
                },
                |output| {
                    let (sum, norm) = output.unwrap();
                    read(if half == 0 { sum } else { norm })
                },
                4e-6,
            );
        }
    }
}

#[test]
fn a_layer_laid_out_for_another_backend_is_refused() {
    let device = Device::flex();
    let packed = conv(Backend::BrowserCpu, 5, 3, 1, &device);
    let dense = conv(Backend::Cpu, 5, 3, 1, &device);
    let input = || tensor(&values(5, 2, 1.0), [1, 1, 5], &device);
    let project = |layer| Project {
        layer,
        input: input(),
        then: Then::Nothing,
    };
    let refused = |result: Result<Tensor<3>, ModelError>| match result {
        Err(e @ ModelError::WeightLayout { .. }) => e.to_string(),
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("ran on weights laid out for another backend"),
    };
    assert!(refused(Backend::Cpu.run(project(&packed))).contains("unpacked"));
    assert!(refused(project(&packed).reference()).contains("unpacked"));
    assert!(refused(Backend::BrowserCpu.run(project(&dense))).contains("packed"));
    assert!(Backend::BrowserCpu.run(project(&packed)).is_ok());
}

/// The query, keys and values of [`ProjectQkv`] with any bias left to the attention added.
fn qkv_with_bias(qkv: Result<clozelab::model::ops::qkv::Qkv, ModelError>) -> Vec<f32> {
    let qkv = qkv.unwrap();
    let [_, n_head, _, head_dim] = qkv.query.dims();
    let kv_heads = qkv.keys_values.dims()[1] / 2;
    let (mut query, mut keys_values) = (qkv.query, qkv.keys_values);
    if let Some(bias) = qkv.bias {
        let part = |from: usize, heads: usize| {
            bias.clone()
                .narrow(0, from * head_dim, heads * head_dim)
                .reshape([1, heads, 1, head_dim])
        };
        query = query + part(0, n_head);
        keys_values = keys_values + part(n_head, 2 * kv_heads);
    }
    let mut all = read(query);
    all.extend(read(keys_values));
    all
}

/// Grouped heads (6 queries over 2 keys and values, as SmolLM2's 9 over 3) among them.
#[test]
fn query_key_value_projection_bodies_equal_their_references() {
    for (n_head, kv_heads, head_dim, seq) in [
        (3, 3, 5, 1),
        (3, 3, 5, 4),
        (1, 1, MAX_HEAD_DIM + 3, 2),
        (6, 2, 5, 1),
        (6, 2, 5, 3),
    ] {
        let (n_embd, batch) = (n_head * head_dim, 2);
        let width = (n_head + 2 * kv_heads) * head_dim;
        let x = values(batch * seq * n_embd, 8, 1.0);
        let layers = PerBackend::new(|backend, device| conv(backend, n_embd, width, 9, device));
        bodies_agree(
            &format!(
                "query/key/value projection, {n_head} heads over {kv_heads} of {head_dim}, {seq} tokens"
            ),
            |backend, device| ProjectQkv {
                c_attn: layers.of(backend),
                x: tensor(&x, [batch, seq, n_embd], device),
                n_head,
                kv_heads,
                // Both ways on the GPU: the bias left to the attention, or added first.
                may_defer_bias: seq == 1,
            },
            qkv_with_bias,
            3e-6,
        );
    }
}

/// One attention case: rows, heads, head width, new tokens, cached tokens, prefix length (0:
/// none), and whether the projection's bias is left to the op.
struct Case {
    batch: usize,
    heads: usize,
    head_dim: usize,
    seq: usize,
    past: usize,
    prefix_len: usize,
    biased: bool,
}

#[test]
fn attention_bodies_equal_their_references() {
    let cases = [
        Case {
            batch: 3,
            heads: 3,
            head_dim: 5,
            seq: 1,
            past: 4,
            prefix_len: 0,
            biased: false,
        },
        Case {
            batch: 2,
            heads: 3,
            head_dim: 7,
            seq: 5,
            past: 0,
            prefix_len: 0,
            biased: true,
        },
        Case {
            batch: 3,
            heads: 2,
            head_dim: 9,
            seq: 2,
            past: 3,
            prefix_len: 6,
            biased: true,
        },
        Case {
            batch: 1,
            heads: 1,
            head_dim: MAX_HEAD_DIM + 3,
            seq: 3,
            past: 1,
            prefix_len: 2,
            biased: false,
        },
    ];
    for case in &cases {
        let Case {
            batch,
            heads,
            head_dim,
            seq,
            past,
            prefix_len,
            biased,
        } = *case;
        let total = past + seq;
        let query = values(batch * heads * seq * head_dim, 10, 1.0);
        let keys = values(batch * heads * total * head_dim, 11, 1.0);
        let vals = values(batch * heads * total * head_dim, 12, 1.0);
        let bias = values(3 * heads * head_dim, 13, 0.3);
        let prefix_keys = values(heads * prefix_len * head_dim, 14, 1.0);
        let prefix_values = values(heads * prefix_len * head_dim, 15, 1.0);
        // Every row hides a different part of the prefix, as a joined prefix's segments do.
        let hide: Vec<f32> = (0..batch * prefix_len)
            .map(|i| {
                if (i / prefix_len + i) % 3 == 1 {
                    -1.0e9
                } else {
                    0.0
                }
            })
            .collect();
        let prefixes: Vec<(Tensor<4>, Tensor<4>)> = std::iter::once(Device::flex())
            .chain(backends().into_iter().map(|(_, d)| d))
            .map(|device| {
                let shape = [1, heads, prefix_len, head_dim];
                (
                    tensor(&prefix_keys, shape, &device),
                    tensor(&prefix_values, shape, &device),
                )
            })
            .collect();
        let prefix_on = |device: &Device| {
            prefixes
                .iter()
                .find(|(k, _)| k.device() == *device)
                .expect("a prefix per device")
        };
        bodies_agree(
            &format!(
                "attention: batch {batch}, {heads} heads of {head_dim}, {seq} new after {past}, prefix {prefix_len}, bias left {biased}"
            ),
            |_, device| {
                StepAttention(StepInputs {
                    query: tensor(&query, [batch, heads, seq, head_dim], device),
                    own_keys: tensor(&keys, [batch, heads, total, head_dim], device),
                    own_values: tensor(&vals, [batch, heads, total, head_dim], device),
                    prefix: (prefix_len > 0).then(|| prefix_on(device)),
                    prefix_mask: (prefix_len > 0)
                        .then(|| tensor(&hide, [batch, 1, 1, prefix_len], device)),
                    bias: biased.then(|| tensor(&bias, [3 * heads * head_dim], device)),
                    past,
                    scale: 1.0 / (head_dim as f32).sqrt(),
                })
            },
            read,
            3e-6,
        );
    }
}

/// `wte` `[vocab, width]` laid out for `backend`: in chunks of 8 rows where it is chunked (the
/// last one shorter, as `wte`'s is), so that a lookup and the head cross chunks.
fn table(
    backend: Backend,
    values: &[f32],
    vocab: usize,
    width: usize,
    device: &Device,
) -> TokenEmbedding {
    match backend {
        Backend::BrowserCpu => TokenEmbedding::packed(values, vocab, width, device).unwrap(),
        Backend::Cpu | Backend::Gpu => {
            TokenEmbedding::from_rows_in_chunks(values.to_vec(), vocab, width, 8, device)
        }
    }
}

#[test]
fn embedding_and_head_bodies_equal_their_references() {
    // The odd sizes are the vocabulary's and its last chunk's; the width is 16 because on
    // lavapipe the GPU's product against a transposed chunk 12, 13 or 20 wide took 5 to 14 s
    // (16 wide: 0.07 s), and GPT-2's widths are multiples of 64.
    let (vocab, width, batch, seq) = (23, 16, 3, 4);
    let wte = values(vocab * width, 16, 1.0);
    // Every chunk's first and last row, and an id repeated.
    let ids: Vec<i64> = vec![0, 7, 8, 15, 16, 22, 3, 3, 12, 20, 1, 9];
    let hidden = values(batch * seq * width, 17, 1.0);
    let tables = PerBackend::new(|backend, device| table(backend, &wte, vocab, width, device));
    for base_batch in [1, batch] {
        let base = values(base_batch * seq * width, 18, 0.5);
        bodies_agree(
            &format!("embedding lookup onto a base of batch {base_batch}"),
            |backend, device| EmbedTokens {
                table: tables.of(backend),
                ids: Tensor::<2, Int>::from_data(
                    TensorData::new(ids.clone(), [batch, seq]),
                    device,
                ),
                base: tensor(&base, [base_batch, seq, width], device),
            },
            |output| read(output.unwrap()),
            1e-6,
        );
    }
    bodies_agree(
        "LM head",
        |backend, device| LmHead {
            table: tables.of(backend),
            hidden: tensor(&hidden, [batch, seq, width], device),
        },
        |output| read(output.unwrap()),
        3e-6,
    );
}

#[test]
fn draw_bodies_equal_their_reference() {
    let (rows, vocab) = (3, 37);
    let logits = values(rows * vocab, 19, 3.0);
    let counts = vec![2, 0, 5];
    let uniforms: Vec<f32> = values(7, 20, 0.5).iter().map(|u| u + 0.5).collect();
    for temperature in [1.0, 0.6] {
        bodies_agree(
            &format!("draw at temperature {temperature}"),
            |_, device| DrawTokens {
                logits: tensor(&logits, [rows, vocab], device),
                counts: counts.clone(),
                uniforms: uniforms.clone(),
                temperature,
            },
            |ids| {
                pollster::block_on(ids)
                    .unwrap()
                    .into_iter()
                    .map(|id| id as f32)
                    .collect()
            },
            0.0,
        );
    }
}

#[test]
fn storage_bodies_give_the_reference_layout() {
    // The cache's storage: zeros on the CPU; a GPU's is left uncleared, so only its shape counts.
    for (backend, device) in backends() {
        let op = CacheStorage {
            shape: [2, 6, 3, 5],
            device: device.clone(),
        };
        let storage = backend.run(op.clone());
        assert_eq!(storage.dims(), op.clone().reference().dims(), "{backend:?}");
        if backend != Backend::Gpu {
            assert!(read(storage).iter().all(|&v| v == 0.0), "{backend:?}");
        }
    }
    // A weight stored for each backend gives the reference's products (packed or not).
    let (n_in, n_out) = (11, 6);
    let weight = values(n_in * n_out, 21, 1.0);
    let probe = values(2 * n_in, 22, 1.0);
    let stored = |backend: Backend, device: &Device| {
        let bias = burn::module::Param::from_tensor(Tensor::<1>::zeros([n_out], device));
        backend
            .run(StoreProjection {
                weight: weight.clone(),
                shape: [n_in, n_out],
                bias,
                device: device.clone(),
            })
            .unwrap()
    };
    let reference = Project {
        layer: &stored(Backend::Cpu, &Device::flex()),
        input: tensor(&probe, [1, 2, n_in], &Device::flex()),
        then: Then::Nothing,
    }
    .reference()
    .unwrap();
    for (backend, device) in backends() {
        let layer = stored(backend, &device);
        assert_eq!(layer.dims(), [n_in, n_out], "{backend:?}");
        assert_eq!(
            layer.panels.is_some(),
            backend == Backend::BrowserCpu,
            "{backend:?}"
        );
        let got = backend
            .run(Project {
                layer: &layer,
                input: tensor(&probe, [1, 2, n_in], &device),
                then: Then::Nothing,
            })
            .unwrap();
        let worst = read(got)
            .iter()
            .zip(read(reference.clone()))
            .map(|(g, w)| (g - w).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst < 1e-5,
            "{backend:?}: stored weight's product differs by {worst}"
        );
    }
    // `wte` stored for each backend: chunked under the buffer budget, or packed.
    let (vocab, width) = (9, 4);
    let rows = values(vocab * width, 23, 1.0);
    for (backend, device) in backends() {
        let store = StoreEmbedding {
            values: rows.clone(),
            vocab,
            n_embd: width,
            device: device.clone(),
        };
        let table = backend.run(store).unwrap();
        assert_eq!(table.width(), width, "{backend:?}");
        assert_eq!(
            table.panels.is_some(),
            backend == Backend::BrowserCpu,
            "{backend:?}"
        );
    }
}
