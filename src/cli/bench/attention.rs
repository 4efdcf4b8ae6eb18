//! `clozelab bench attention`: the model's attention op over a block's cache
//! (`model::ops::cached_attention::AttendCached`: one kernel on a GPU, which also writes the step into
//! the cache; on the CPU the step copied in, then burn's `attention` without a prefix, burn's
//! composition over one), the cache moved in and out of each call as the model does, against
//! burn's own `attention` and against burn's composition (the op's reference body) on the same
//! inputs and outputs, per backend: a decoding step of a sampling tree over a shared prefix (64 and 512
//! rows), and a prefill. burn's side gets the prefix's keys and values concatenated before each
//! row's own (what the model would have to build to call it) and its heads merged after, so
//! both sides start from the same tensors and end with the same `[batch, seq, n_embd]`.

use std::cell::RefCell;
use std::time::Instant;

use burn::tensor::module::attention;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{Device, Tensor, TensorData};

use super::args::BenchAttentionArgs;
use super::{median, process_cpu_seconds, write_report};
use crate::cli::error::CliError;
use crate::model::ops::backend::{Backend, Op};
use crate::model::ops::cached_attention::AttendCached;
use crate::model::ops::past::Past;
use crate::model::ops::qkv::Qkv;
use crate::model::readback::read_f32;
use crate::runtime::backend::device_for;

/// One shape: rows, heads, head width, new tokens, cached own tokens, shared prefix tokens.
#[derive(Clone, Copy, Debug, serde::Serialize)]
struct Shape {
    name: &'static str,
    batch: usize,
    heads: usize,
    head_dim: usize,
    seq: usize,
    past: usize,
    prefix: usize,
}

/// GPT-2 small's heads (12 × 64) in each shape.
const fn gpt2_small(
    name: &'static str,
    batch: usize,
    seq: usize,
    past: usize,
    prefix: usize,
) -> Shape {
    Shape {
        name,
        batch,
        heads: 12,
        head_dim: 64,
        seq,
        past,
        prefix,
    }
}

const SHAPES: [Shape; 5] = [
    gpt2_small("decode step, 64 rows over a 24-token prefix", 64, 1, 3, 24),
    gpt2_small(
        "decode step, 512 rows over a 24-token prefix",
        512,
        1,
        3,
        24,
    ),
    gpt2_small("decode step, 1 row after 63 tokens", 1, 1, 63, 0),
    gpt2_small("prefill of 16 tokens", 1, 16, 0, 0),
    gpt2_small("prefill of 64 tokens", 1, 64, 0, 0),
];

struct Inputs {
    query: Tensor<4>,
    /// The step's keys and values, `[batch, 2·heads, seq, head_dim]`.
    keys_values: Tensor<4>,
    /// The block's cache, `[batch, 2·heads, past + seq, head_dim]`, moved into each call and
    /// back, so that nothing else holds it, as in the model. Every side runs after a call of the
    /// op, which writes the step's keys and values into its last `seq` positions.
    cache: RefCell<Option<Tensor<4>>>,
    prefix: Option<(Tensor<4>, Tensor<4>)>,
}

impl Inputs {
    /// The own keys and values (views of the cache), as burn's `attention` takes them.
    fn own(&self) -> (Tensor<4>, Tensor<4>) {
        let cache = self
            .cache
            .borrow()
            .clone()
            .expect("the cache is back after each call");
        let [batch, both, len, head_dim] = cache.dims();
        let part = |heads| cache.clone().slice([0..batch, heads, 0..len, 0..head_dim]);
        (part(0..both / 2), part(both / 2..both))
    }

    /// The op on `backend`'s body `body` (see [`AttendCached`]), the cache taken and put back.
    fn attend(
        &self,
        past: usize,
        scale: f32,
        body: impl FnOnce(AttendCached) -> (Tensor<3>, Tensor<4>),
    ) -> Tensor<3> {
        let cache = self
            .cache
            .borrow_mut()
            .take()
            .expect("the cache is back after each call");
        let (output, cache) = body(AttendCached {
            qkv: Qkv {
                query: self.query.clone(),
                keys_values: self.keys_values.clone(),
                bias: None,
            },
            cache,
            group: 1,
            prefix: self.prefix.as_ref(),
            prefix_mask: None,
            past: Past::on_host(past),
            scale,
        });
        *self.cache.borrow_mut() = Some(cache);
        output
    }
}

fn inputs(shape: Shape, device: &Device) -> Inputs {
    let tensor = |dims: [usize; 4], seed: f32| {
        let n: usize = dims.iter().product();
        let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.618 + seed).sin()).collect();
        Tensor::<4>::from_data(TensorData::new(values, dims), device)
    };
    let Shape {
        batch,
        heads,
        head_dim,
        seq,
        past,
        prefix,
        ..
    } = shape;
    Inputs {
        query: tensor([batch, heads, seq, head_dim], 0.1),
        keys_values: tensor([batch, 2 * heads, seq, head_dim], 0.6),
        cache: RefCell::new(Some(tensor([batch, 2 * heads, past + seq, head_dim], 0.2))),
        prefix: (prefix > 0).then(|| {
            (
                tensor([1, heads, prefix, head_dim], 0.4),
                tensor([1, heads, prefix, head_dim], 0.5),
            )
        }),
    }
}

fn burns(inputs: &Inputs, causal: bool) -> Tensor<3> {
    let [batch, heads, seq, head_dim] = inputs.query.dims();
    let (own_keys, own_values) = inputs.own();
    let (keys, values) = match &inputs.prefix {
        None => (own_keys, own_values),
        Some((k, v)) => {
            let expand = |t: &Tensor<4>| t.clone().expand([batch as i64, -1, -1, -1]);
            (
                Tensor::cat(vec![expand(k), own_keys], 2),
                Tensor::cat(vec![expand(v), own_values], 2),
            )
        }
    };
    // burn's default scale, 1/sqrt(head_dim), is the op's (the outputs are compared below);
    // naming it would send burn's cubecl backends to their unfused fallback, as they take the
    // flash kernels only without a scale.
    let options = AttentionModuleOptions {
        scale: None,
        softcap: None,
        is_causal: causal,
    };
    attention(inputs.query.clone(), keys, values, None, None, options)
        .swap_dims(1, 2)
        .reshape([batch, seq, heads * head_dim])
}

/// One side's median milliseconds and CPU seconds per call over `rounds` calls, each read back.
fn time(
    rounds: usize,
    run: impl Fn() -> Tensor<3>,
) -> Result<(f64, Option<f64>, Vec<f32>), CliError> {
    let output = pollster::block_on(read_f32(run()))?;
    let cpu_before = process_cpu_seconds();
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        pollster::block_on(read_f32(run().sum()))?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = cpu_before
        .zip(process_cpu_seconds())
        .map(|(a, b)| (b - a) / rounds as f64);
    Ok((median(times), cpu, output))
}

/// Runs the benchmark and prints one line per backend and shape.
pub fn attention_bench(args: &BenchAttentionArgs) -> Result<(), CliError> {
    let rounds = if args.quick { 3 } else { args.rounds.max(1) };
    let mut rows = Vec::new();
    for kind in args.backend.kinds() {
        let compute = match device_for(kind) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipping {}: {e}", kind.name());
                continue;
            }
        };
        for shape in SHAPES {
            let data = inputs(shape, &compute.device);
            let scale = 1.0 / (shape.head_dim as f32).sqrt();
            // A prefill without a prefix is causal; a decoding step's one query sees every key.
            let causal = shape.seq > 1;
            let backend = Backend::of(&compute.device);
            let (our_ms, our_cpu, a) = time(rounds, || {
                data.attend(shape.past, scale, |op| backend.run(op))
            })?;
            let (burn_ms, burn_cpu, b) = time(rounds, || burns(&data, causal))?;
            let (composed_ms, _, c) = time(rounds, || {
                data.attend(shape.past, scale, |op| op.reference())
            })?;
            let worst = a
                .iter()
                .zip(&b)
                .chain(a.iter().zip(&c))
                .map(|(x, y)| (x - y).abs())
                .fold(0.0f32, f32::max);
            println!(
                "{} ({}), {}: clozelab {our_ms:.3} ms, burn attention {burn_ms:.3} ms ({:.2}×), \
                 burn's composition {composed_ms:.3} ms ({:.2}×); CPU s per call {} against {}; \
                 outputs differ by at most {worst:.1e}",
                kind.name(),
                compute.adapter,
                shape.name,
                burn_ms / our_ms,
                composed_ms / our_ms,
                our_cpu.map_or("?".into(), |c| format!("{c:.4}")),
                burn_cpu.map_or("?".into(), |c| format!("{c:.4}")),
            );
            if worst > 1e-3 {
                return Err(CliError::Usage(format!(
                    "{}: the attention bodies differ by {worst} on {}",
                    kind.name(),
                    shape.name
                )));
            }
            rows.push(serde_json::json!({
                "backend": kind.name(), "adapter": compute.adapter, "shape": shape,
                "clozelab_ms": our_ms, "burn_attention_ms": burn_ms, "composition_ms": composed_ms,
                "ratio_burn_over_clozelab": burn_ms / our_ms,
                "clozelab_cpu_s": our_cpu, "burn_attention_cpu_s": burn_cpu,
            }));
        }
    }
    write_report(
        &args.out,
        &serde_json::json!({ "rounds": rounds, "results": rows }),
    )
}
