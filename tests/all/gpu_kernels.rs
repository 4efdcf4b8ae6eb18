//! The GPU bodies of `model::ops` (`model::ops::kernels`) against burn's composition of the same operations on the
//! CPU backend: the layer norm over rows of several widths; a step's attention with and without
//! a shared prefix, its segment mask, cached keys, several new tokens (causal), the projection's
//! bias left to the kernel, and more keys than a workgroup scores at once, on views with the
//! strides the model passes; the token embedding gathered from uneven chunks of `wte`; the
//! sampler's draw against inverse CDF on the host; the same attention over a block's cache,
//! which the kernel writes the step into (grouped key/value heads too).

use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor, TensorData};
use clozelab::model::ops::backend::Backend;
use clozelab::model::ops::gelu::GeluNew;
use clozelab::model::ops::grouped_heads::repeat_heads;
use clozelab::model::ops::kernels::{self, StepAttention};
use clozelab::model::ops::past::Past;

use crate::common;

/// Deterministic values in [-scale, scale).
fn values(count: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

pub(crate) fn tensor<const D: usize>(
    data: &[f32],
    shape: [usize; D],
    device: &Device,
) -> Tensor<D> {
    Tensor::from_data(TensorData::new(data.to_vec(), shape), device)
}

pub(crate) fn read<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_to_vec::<f32>().expect("f32 data")
}

/// The largest difference relative to the CPU's value (absolute below 1).
fn worst_relative_difference(gpu: &[f32], cpu: &[f32]) -> f32 {
    assert_eq!(gpu.len(), cpu.len());
    gpu.iter()
        .zip(cpu)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0, f32::max)
}

#[test]
fn layer_norm_kernel_matches_the_cpu() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let cpu = Device::flex();
    for (rows, width) in [(1, 768), (7, 64), (3, 1600), (2, 300)] {
        let input = values(rows * width, width as u64, 4.0);
        let weight = values(width, 1, 1.5);
        let bias = values(width, 2, 0.5);
        let run = |device: &Device| {
            read(clozelab::model::ops::layer_norm::layer_norm(
                Backend::of(device),
                tensor(&input, [rows, 1, width], device),
                tensor(&weight, [width], device),
                tensor(&bias, [width], device),
                1e-5,
            ))
        };
        let worst = common::worst_difference(&run(&gpu.device), &run(&cpu));
        assert!(
            worst < 1e-5,
            "{rows}×{width}: the kernel differs by {worst}"
        );
    }
}

/// One attention case: rows, heads, head width, new tokens, cached tokens, prefix segments,
/// and whether the operands come without the projection's bias (the kernel then adds it).
struct Case {
    batch: usize,
    heads: usize,
    head_dim: usize,
    seq: usize,
    past: usize,
    segments: Vec<usize>,
    biased: bool,
}

/// softmax(q·kᵀ·scale + masks)·v with burn's operations, heads side by side.
fn composed(step: StepAttention) -> Tensor<3> {
    let StepAttention {
        mut query,
        mut own_keys,
        mut own_values,
        mut prefix,
        prefix_mask,
        bias,
        past,
        scale,
    } = step;
    let [batch, heads, seq, head_dim] = query.dims();
    // The bias onto every query, key and value (the kernel leaves the keys' out).
    if let Some(bias) = bias {
        let part = |i: usize| {
            bias.clone()
                .narrow(0, i * heads * head_dim, heads * head_dim)
                .reshape([1, heads, 1, head_dim])
        };
        query = query + part(0);
        own_keys = own_keys + part(1);
        own_values = own_values + part(2);
        prefix = prefix.map(|(keys, values)| (keys + part(1), values + part(2)));
    }
    let total = past + seq;
    let causal: Vec<f32> = (0..seq)
        .flat_map(|t| (0..total).map(move |j| if j <= past + t { 0.0 } else { -1.0e9 }))
        .collect();
    let causal = tensor(&causal, [1, 1, seq, total], &query.device());
    let own_scores = query.clone().matmul(own_keys.swap_dims(2, 3)) * scale + causal;
    let (scores, values) = match prefix {
        None => (own_scores, own_values),
        Some((keys, values)) => {
            let mut prefix_scores = query.matmul(keys.swap_dims(2, 3)) * scale;
            if let Some(mask) = prefix_mask {
                prefix_scores = prefix_scores + mask;
            }
            let prefix_values = values.expand([batch as i64, -1, -1, -1]);
            (
                Tensor::cat(vec![prefix_scores, own_scores], 3),
                Tensor::cat(vec![prefix_values, own_values], 2),
            )
        }
    };
    softmax(scores, 3)
        .matmul(values)
        .swap_dims(1, 2)
        .reshape([batch, seq, heads * head_dim])
}

#[test]
fn attention_kernel_matches_the_cpu() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let cpu = Device::flex();
    let cases = [
        // A decoding step over a joined prefix of three segments.
        Case {
            batch: 5,
            heads: 4,
            head_dim: 16,
            seq: 1,
            past: 3,
            segments: vec![4, 2, 7],
            biased: true,
        },
        // A prefill: causal over 70 keys, more than one chunk.
        Case {
            batch: 2,
            heads: 2,
            head_dim: 64,
            seq: 70,
            past: 0,
            segments: vec![],
            biased: false,
        },
        // Several new tokens after cached ones, one long prefix, a head wider than 64.
        Case {
            batch: 3,
            heads: 3,
            head_dim: 80,
            seq: 4,
            past: 5,
            segments: vec![130],
            biased: true,
        },
        // More workgroups (2100 × 32) than one dispatch dimension holds (65535): the launch
        // spreads them over two, and each must still find its own row and head.
        Case {
            batch: 2100,
            heads: 32,
            head_dim: 16,
            seq: 1,
            past: 1,
            segments: vec![3],
            biased: false,
        },
        // GPT-2 small's heads, one row, prefix in two segments.
        Case {
            batch: 2,
            heads: 12,
            head_dim: 64,
            seq: 1,
            past: 0,
            segments: vec![9, 60],
            biased: true,
        },
    ];
    for case in &cases {
        assert!(case.head_dim <= kernels::MAX_HEAD_DIM);
        // The step over the cache's views, its own keys and values slices of one buffer.
        let on_gpu = kernels::attention(cached_operands(case, 1, &gpu.device).1);
        let on_cpu = composed(cached_operands(case, 1, &cpu).1);
        assert_eq!(on_gpu.dims(), on_cpu.dims());
        let worst = common::worst_difference(&read(on_gpu), &read(on_cpu));
        assert!(
            worst < 1e-5,
            "batch {} heads {} head_dim {} seq {} past {} segments {:?} biased {}: the kernel differs by {worst}",
            case.batch,
            case.heads,
            case.head_dim,
            case.seq,
            case.past,
            case.segments,
            case.biased
        );
    }
}

/// The cached kernel's operands for `case` with `group` query heads per key/value head (`heads`
/// is the key/value heads), as the model passes them (the queries and the step's keys and values
/// views of the fused projection), and on the side what it should do: the cache with the step's
/// keys and values written from `past` on, and the plain step over that cache's views.
fn cached_operands(
    case: &Case,
    group: usize,
    device: &Device,
) -> (kernels::CachedStepAttention, StepAttention, Tensor<4>) {
    let Case {
        batch,
        heads: kv_heads,
        head_dim,
        seq,
        past,
        ref segments,
        biased,
    } = *case;
    let heads = kv_heads * group;
    let projection = tensor(
        &values(batch * seq * (heads + 2 * kv_heads) * head_dim, 13, 2.0),
        [batch, seq, heads + 2 * kv_heads, head_dim],
        device,
    )
    .swap_dims(1, 2);
    let query = projection.clone().narrow(1, 0, heads);
    let keys_values = projection.narrow(1, heads, 2 * kv_heads);
    let capacity = past + seq + 2;
    // What the positions from `past` on hold before the step must not matter.
    let cache = tensor(
        &values(batch * 2 * kv_heads * capacity * head_dim, 14, 2.0),
        [batch, 2 * kv_heads, capacity, head_dim],
        device,
    );
    let total = past + seq;
    let written = cache.clone().slice_assign(
        [0..batch, 0..2 * kv_heads, past..total, 0..head_dim],
        keys_values.clone(),
    );
    let own = |heads_range: std::ops::Range<usize>| {
        repeat_heads(
            written
                .clone()
                .slice([0..batch, heads_range, 0..total, 0..head_dim]),
            group,
        )
    };
    let prefix_len: usize = segments.iter().sum();
    let prefix = (prefix_len > 0).then(|| {
        let part = |seed| {
            tensor(
                &values(kv_heads * prefix_len * head_dim, seed, 2.0),
                [1, kv_heads, prefix_len, head_dim],
                device,
            )
        };
        (part(15), part(16))
    });
    let repeated = prefix
        .clone()
        .map(|(keys, values)| (repeat_heads(keys, group), repeat_heads(values, group)));
    let prefix_mask = (segments.len() > 1).then(|| {
        let mask: Vec<f32> = (0..batch)
            .flat_map(|row| {
                let own = row % segments.len();
                segments
                    .iter()
                    .enumerate()
                    .flat_map(move |(segment, &len)| {
                        std::iter::repeat_n(if segment == own { 0.0 } else { -1.0e9 }, len)
                    })
            })
            .collect();
        tensor(&mask, [batch, 1, 1, prefix_len], device)
    });
    // The model leaves the bias to the kernel only where every head has its own keys.
    let bias = (biased && group == 1).then(|| {
        tensor(
            &values(3 * heads * head_dim, 17, 1.5),
            [3 * heads * head_dim],
            device,
        )
    });
    let scale = 1.0 / (head_dim as f32).sqrt();
    let step = StepAttention {
        query: query.clone(),
        own_keys: own(0..kv_heads),
        own_values: own(kv_heads..2 * kv_heads),
        prefix: repeated,
        prefix_mask: prefix_mask.clone(),
        bias: bias.clone(),
        past,
        scale,
    };
    let cached = kernels::CachedStepAttention {
        query,
        keys_values,
        cache,
        group,
        // Each query head reads its key/value head of the prefix too: never repeated.
        prefix,
        prefix_mask,
        bias,
        past: Past::on_host(past),
        scale,
    };
    (cached, step, written)
}

#[test]
fn cached_attention_kernel_writes_the_step_and_matches_the_cpu() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let cpu = Device::flex();
    let case = |batch, heads, head_dim, seq, past, segments: Vec<usize>, biased| Case {
        batch,
        heads,
        head_dim,
        seq,
        past,
        segments,
        biased,
    };
    let cases = [
        // GPT-2's decoding step, bias left to the kernel.
        (case(1, 12, 64, 1, 9, vec![], true), 1),
        // A prefill of more keys than one chunk, after cached ones.
        (case(2, 2, 64, 70, 3, vec![], false), 1),
        // A joined prefix of three segments, several rows and new tokens.
        (case(5, 2, 16, 3, 2, vec![4, 2, 7], true), 1),
        // Grouped key/value heads (Llama's): four query heads per cached head.
        (case(3, 2, 32, 2, 4, vec![5], false), 4),
        // The first step: nothing cached yet.
        (case(2, 3, 80, 1, 0, vec![], true), 1),
    ];
    // Each case with the count of cached keys as a launch argument, then from a device buffer
    // (a replayed step's), the argument then wrong on purpose.
    for ((case, group), from_buffer) in cases.iter().flat_map(|c| [(c, false), (c, true)]) {
        let (mut on_gpu, _, expected_cache) = cached_operands(case, *group, &gpu.device);
        if from_buffer {
            let count = tensor(&[case.past as f32], [1], &gpu.device);
            on_gpu.past = Past {
                count: case.past + 1,
                on_device: Some(count),
            };
        }
        let (_, on_cpu, _) = cached_operands(case, *group, &cpu);
        let (output, cache) = kernels::attention_cached(on_gpu);
        let expected = composed(on_cpu);
        assert_eq!(output.dims(), expected.dims());
        let what = format!(
            "batch {} kv heads {} × {group} head_dim {} seq {} past {} segments {:?}, the \
             count from a buffer: {from_buffer}",
            case.batch, case.heads, case.head_dim, case.seq, case.past, case.segments
        );
        let worst = common::worst_difference(&read(output), &read(expected));
        assert!(worst < 1e-5, "{what}: the output differs by {worst}");
        assert_eq!(
            read(cache),
            read(expected_cache),
            "{what}: the cache is not the old one with the step written in"
        );
    }
}

#[test]
fn epilogue_kernels_match_the_cpu() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let cpu = Device::flex();
    let (rows, width) = (5, 3072);
    // Far enough out that a tanh computed through exp would overflow.
    let product = values(rows * width, 7, 60.0);
    let bias = values(width, 8, 1.0);
    let residual = values(rows * width, 9, 100.0);
    let on = |device: &Device| {
        (
            tensor(&product, [1, rows, width], device),
            tensor(&bias, [width], device),
            tensor(&residual, [1, rows, width], device),
        )
    };
    let (p, b, _) = on(&gpu.device);
    let gelu_gpu = read(kernels::bias_gelu(p, b));
    let (p, b, _) = on(&cpu);
    let gelu_cpu = read(Backend::Cpu.run(GeluNew(p + b.unsqueeze::<3>())));
    let worst = worst_relative_difference(&gelu_gpu, &gelu_cpu);
    assert!(
        gelu_gpu.iter().all(|v| v.is_finite()),
        "GELU gave a non-finite value"
    );
    eprintln!("bias + GELU: worst relative difference {worst:e}");
    assert!(worst < 2e-6, "bias + GELU differs by {worst} (relative)");

    let (p, b, r) = on(&gpu.device);
    let sum_gpu = read(kernels::bias_residual(p, b, r));
    let (p, b, r) = on(&cpu);
    let sum_cpu = read((p + b.unsqueeze::<3>()) + r);
    let worst = worst_relative_difference(&sum_gpu, &sum_cpu);
    eprintln!("bias + residual: worst relative difference {worst:e}");
    assert!(
        worst < 2e-6,
        "bias + residual differs by {worst} (relative)"
    );
}

#[test]
fn embedding_kernel_matches_the_cpu_across_chunks() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let cpu = Device::flex();
    let (vocab, width) = (23, 40);
    let table = values(vocab * width, 11, 1.0);
    // Uneven chunks, as `wte`'s last one is: rows 0..7, 7..16, 16..23.
    let heights = [7, 9, 7];
    let chunks = |device: &Device| -> Vec<Tensor<2>> {
        let mut start = 0;
        heights
            .iter()
            .map(|&h| {
                let part = tensor(
                    &table[start * width..(start + h) * width],
                    [h, width],
                    device,
                );
                start += h;
                part
            })
            .collect()
    };
    // Every chunk's first and last row, and an id repeated.
    let ids: Vec<i64> = vec![0, 6, 7, 15, 16, 22, 3, 3, 12, 20, 1, 8];
    let (batch, seq) = (3, 4);
    let id_tensor = |device: &Device| {
        Tensor::<2, burn::tensor::Int>::from_data(
            TensorData::new(ids.clone(), [batch, seq]),
            device,
        )
    };
    for base_batch in [1, batch] {
        let base = values(base_batch * seq * width, 12 + base_batch as u64, 0.5);
        let got = read(kernels::token_embedding(
            &chunks(&gpu.device),
            id_tensor(&gpu.device),
            tensor(&base, [base_batch, seq, width], &gpu.device),
        ));
        let whole = tensor(&table, [vocab, width], &cpu);
        let want = read(
            burn::tensor::module::embedding(whole, id_tensor(&cpu))
                + tensor(&base, [base_batch, seq, width], &cpu),
        );
        let worst = common::worst_difference(&got, &want);
        eprintln!("embedding, base of batch {base_batch}: worst difference {worst:e}");
        assert!(worst < 1e-6, "embedding differs by {worst}");
    }
    // The model's lookup alone (no base) takes the same kernel on a GPU: `wte` in chunks of 7.
    let chunked = clozelab::model::ops::embedding::TokenEmbedding::from_rows_in_chunks(
        table.clone(),
        vocab,
        width,
        7,
        &gpu.device,
    );
    let got = read(
        chunked
            .forward(Backend::Gpu, id_tensor(&gpu.device))
            .unwrap(),
    );
    let want = read(burn::tensor::module::embedding(
        tensor(&table, [vocab, width], &cpu),
        id_tensor(&cpu),
    ));
    let worst = common::worst_difference(&got, &want);
    assert!(worst < 1e-6, "the chunked lookup differs by {worst}");
}

/// The drawn token by inverse CDF in f64: the first whose running sum exceeds `u` · total.
fn host_draw(weights: &[f64], u: f64) -> (usize, Vec<f64>) {
    let mut sums = Vec::with_capacity(weights.len());
    let mut at = 0.0;
    for w in weights {
        at += w;
        sums.push(at);
    }
    let threshold = u * at;
    let token = sums
        .iter()
        .position(|&s| s > threshold)
        .unwrap_or(weights.len() - 1);
    (token, sums)
}

#[test]
fn draw_kernel_matches_inverse_cdf_on_the_host() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    for (vocab, temperature) in [(50257, 1.0f32), (50257, 0.05), (300, 0.7)] {
        let rows = 5;
        // Row 1 is mostly far below its maximum: at T = 0.05 most weights underflow to 0.
        let mut logits = values(rows * vocab, 21 + vocab as u64, 4.0);
        for (k, l) in logits[vocab..2 * vocab].iter_mut().enumerate() {
            if k % 7 != 0 {
                *l -= 60.0;
            }
        }
        // Slots per row: one row with none, one with more than a workgroup has threads.
        let counts = [3usize, 0, 1000, 1, 40];
        let mut starts = vec![0i64];
        for c in counts {
            starts.push(starts.last().unwrap() + c as i64);
        }
        let slots = *starts.last().unwrap() as usize;
        let mut uniforms: Vec<f32> = values(slots, 33, 0.5).iter().map(|v| v + 0.5).collect();
        // The ends of [0, 1): the first token of positive weight, and the last.
        uniforms[0] = 0.0;
        uniforms[1] = 1.0 - f32::EPSILON / 2.0;
        uniforms[slots - 1] = 1.0 - f32::EPSILON / 2.0;
        let got = kernels::draw_tokens(
            tensor(&logits, [rows, vocab], &gpu.device),
            burn::tensor::Tensor::<1, burn::tensor::Int>::from_data(
                TensorData::new(starts.clone(), [rows + 1]),
                &gpu.device,
            ),
            tensor(&uniforms, [slots], &gpu.device),
            temperature,
        )
        .into_data()
        .convert::<i64>()
        .try_to_vec::<i64>()
        .unwrap();
        assert_eq!(got.len(), slots);
        let (mut near_ties, mut widest) = (0, 0f64);
        for r in 0..rows {
            let row = &logits[r * vocab..(r + 1) * vocab];
            let max = row.iter().copied().fold(f32::MIN, f32::max);
            // Weights as the kernel forms them (f32), summed in f64.
            let weights: Vec<f64> = row
                .iter()
                .map(|&l| f64::from(((l - max) * (1.0 / temperature)).exp()))
                .collect();
            for s in starts[r] as usize..starts[r + 1] as usize {
                let (want, sums) = host_draw(&weights, f64::from(uniforms[s]));
                let token = got[s] as usize;
                assert!(
                    token < vocab,
                    "slot {s}: token {token} outside the vocabulary"
                );
                assert!(
                    weights[token] > 0.0,
                    "T={temperature}, row {r}, slot {s}: drew token {token} of weight 0"
                );
                if token != want {
                    // Only where f32's running sums may order the threshold differently.
                    let threshold = f64::from(uniforms[s]) * sums[vocab - 1];
                    let gap = (sums[token.min(want)] - threshold).abs() / sums[vocab - 1];
                    widest = widest.max(gap);
                    assert!(
                        gap < 2e-6,
                        "T={temperature}, row {r}, slot {s}: drew {token}, inverse CDF gives {want}"
                    );
                    near_ties += 1;
                }
            }
        }
        eprintln!(
            "draws, vocabulary {vocab}, T={temperature}: {slots} slots, {near_ties} on a \
             neighbour of the host's token (threshold within {widest:e} of the total from their edge)"
        );
        // f32's running sums are off by ~1e-7 of the total at each of 50 257 edges: some in a
        // thousand draws land beside the f64 answer, no more.
        assert!(
            near_ties * 50 <= slots,
            "{near_ties} of {slots} draws differ from the host's"
        );
    }
}

#[test]
fn draw_kernel_takes_the_token_after_a_threshold_on_an_edge() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    // Equal logits: every weight is exactly 1, every running sum an exact integer, and
    // u = k/vocab puts the threshold exactly on token k − 1's sum (a thread's segment start where
    // k is a multiple of 64, a tile's where it is of 16 384): token k must be drawn.
    let vocab = 32768;
    let edges = [0usize, 1, 63, 64, 65, 16383, 16384, 16448, 32704, 32767];
    let uniforms: Vec<f32> = edges.iter().map(|&k| k as f32 / vocab as f32).collect();
    let got = kernels::draw_tokens(
        tensor(&vec![0.5; vocab], [1, vocab], &gpu.device),
        burn::tensor::Tensor::<1, burn::tensor::Int>::from_data(
            TensorData::new(vec![0i64, edges.len() as i64], [2]),
            &gpu.device,
        ),
        tensor(&uniforms, [edges.len()], &gpu.device),
        1.0,
    )
    .into_data()
    .convert::<i64>()
    .try_to_vec::<i64>()
    .unwrap();
    let want: Vec<i64> = edges.iter().map(|&k| k as i64).collect();
    assert_eq!(got, want);
}

/// A row with a NaN logit gives `NOT_A_NUMBER_DRAW` in each of its slots (rather than the last
/// token, which would pass for `<|endoftext|>`), the row beside it its tokens; the op's GPU body
/// refuses the draw.
#[test]
fn draw_kernel_marks_a_row_whose_logits_are_not_numbers() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    let vocab = 1000;
    let mut logits = vec![0.0f32; 2 * vocab];
    logits[vocab + 17] = f32::NAN;
    let uniforms = [0.25f32, 0.75, 0.5, 0.9];
    let on_device = || {
        (
            tensor(&logits, [2, vocab], &gpu.device),
            burn::tensor::Tensor::<1, burn::tensor::Int>::from_data(
                TensorData::new(vec![0i64, 2, 4], [3]),
                &gpu.device,
            ),
            tensor(&uniforms, [4], &gpu.device),
        )
    };
    let (l, starts, u) = on_device();
    let got = kernels::draw_tokens(l, starts, u, 1.0)
        .into_data()
        .convert::<i64>()
        .try_to_vec::<i64>()
        .unwrap();
    let nan = kernels::NOT_A_NUMBER_DRAW;
    assert_eq!(got, vec![250, 750, nan, nan]);
    let (l, _, _) = on_device();
    let drawn = pollster::block_on(Backend::Gpu.run(clozelab::model::ops::draw::DrawTokens {
        logits: l,
        counts: vec![2, 2],
        uniforms: uniforms.to_vec(),
        temperature: 1.0,
    }));
    assert!(
        matches!(drawn, Err(clozelab::model::ModelError::NotANumber(_))),
        "{drawn:?}"
    );
}

/// The projection with f16 weights against the host's product of the same f16-rounded weights
/// with the f32 activations, in f64: one row (the vector kernel where both widths suit it, and
/// where they do not), a few rows and more rows than a tile. Within 1e-5 of the outputs' scale,
/// where rounding the activations to f16 as well (the composition it replaces) moves them by
/// about 2e-4.
#[test]
fn half_product_rounds_only_the_weights() {
    let Some(gpu) = common::wgpu_or_skip() else {
        return;
    };
    if !clozelab::model::Precision::f16_offered(&gpu.device) {
        assert_ne!(
            std::env::var("CLOZELAB_REQUIRE_WGPU").as_deref(),
            Ok("1"),
            "CLOZELAB_REQUIRE_WGPU=1 but {} offers no shader-f16",
            gpu.adapter
        );
        eprintln!("SKIPPED: {} offers no shader-f16", gpu.adapter);
        return;
    }
    let round = |x: f32| half::f16::from_f32(x).to_f32();
    for (rows, width, out) in [(1, 768, 2304), (1, 100, 30), (4, 64, 192), (130, 256, 64)] {
        let input = values(rows * width, (rows * width) as u64, 2.0);
        let weight = values(width * out, out as u64, 0.1);
        let host = |activation: &dyn Fn(f32) -> f32| -> Vec<f32> {
            (0..rows * out)
                .map(|i| {
                    let (r, c) = (i / out, i % out);
                    (0..width)
                        .map(|k| {
                            f64::from(activation(input[r * width + k]))
                                * f64::from(round(weight[k * out + c]))
                        })
                        .sum::<f64>() as f32
                })
                .collect()
        };
        let half_weight =
            tensor(&weight, [width, out], &gpu.device).cast(burn::tensor::FloatDType::F16);
        let got = read(kernels::half_product(
            tensor(&input, [1, rows, width], &gpu.device),
            half_weight,
        ));
        let scale = host(&|x| x).iter().fold(0f32, |m, v| m.max(v.abs()));
        let error = common::worst_difference(&got, &host(&|x| x)) / scale;
        let with_rounded_activations = common::worst_difference(&got, &host(&round)) / scale;
        eprintln!(
            "half product {rows}×{width}·{width}×{out}: {error:e} of the scale \
             ({with_rounded_activations:e} from rounded activations)"
        );
        assert!(error < 1e-5, "{rows}×{width}·{out}: off by {error:e}");
        assert!(
            with_rounded_activations > 1e-4,
            "{rows}×{width}·{out}: 1e-5 would not tell rounded activations apart \
             ({with_rounded_activations:e})"
        );
    }
    let half_weight =
        tensor(&values(64 * 3, 1, 0.1), [64, 3], &gpu.device).cast(burn::tensor::FloatDType::F16);
    let no_rows = kernels::half_product(Tensor::<3>::zeros([2, 0, 64], &gpu.device), half_weight);
    assert_eq!(no_rows.dims(), [2, 0, 3]);
}
