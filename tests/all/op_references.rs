//! The other model families' ops against Hugging Face transformers' own code
//! (tests/fixtures/ops_reference.json, written by scripts/reference_ops.py): GPT-NeoX's rotary
//! embedding on part of each head and Llama's on all of it, at positions where f32 angles round;
//! Llama's RMS norm; the exact GELU; the SiLU gate; grouped-query attention's repeated key/value
//! heads. Every backend's body here is held against the fixture, the GPU's on lavapipe.

use burn::tensor::{Device, Tensor, TensorData};
use clozelab::model::ops::activation::{GeluExact, SiluGate};
use clozelab::model::ops::backend::Backend;
use clozelab::model::ops::grouped_heads::repeat_heads;
use clozelab::model::ops::rms_norm::RmsNormOp;
use clozelab::model::ops::rotary::{Rotary, RotaryTable};
use serde::Deserialize;

use crate::common;
use crate::op_bodies::{backends, values};

#[derive(Deserialize)]
struct Fixture {
    rotary: Vec<RotaryCase>,
    rms_norm: RmsCase,
    gelu: Elementwise,
    silu_gate: GateCase,
    repeat_kv: RepeatCase,
}

#[derive(Deserialize)]
struct RotaryCase {
    name: String,
    rotary_dims: usize,
    base: f64,
    shape: [usize; 4],
    starts: Vec<usize>,
    seed: u64,
    output: Vec<f32>,
}

#[derive(Deserialize)]
struct RmsCase {
    shape: [usize; 2],
    epsilon: f64,
    seeds: [u64; 2],
    output: Vec<f32>,
}

#[derive(Deserialize)]
struct Elementwise {
    count: usize,
    seed: u64,
    output: Vec<f32>,
}

#[derive(Deserialize)]
struct GateCase {
    count: usize,
    seeds: [u64; 2],
    output: Vec<f32>,
}

#[derive(Deserialize)]
struct RepeatCase {
    shape: [usize; 4],
    seed: u64,
    group: usize,
    output: Vec<f32>,
}

fn fixture() -> Fixture {
    let path = common::repo_root().join("tests/fixtures/ops_reference.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn tensor<const D: usize>(data: Vec<f32>, shape: [usize; D], device: &Device) -> Tensor<D> {
    Tensor::from_data(TensorData::new(data, shape), device)
}

fn read<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

/// The largest difference from Hugging Face's values, relative above 1.
fn assert_close(what: &str, got: &[f32], want: &[f32], tolerance: f32) {
    assert_eq!(got.len(), want.len(), "{what}: size");
    let worst = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs() / w.abs().max(1.0))
        .fold(0.0f32, f32::max);
    assert!(
        worst <= tolerance,
        "{what}: differs from transformers by {worst:e}"
    );
}

#[test]
fn rotary_embeddings_equal_transformers() {
    for case in fixture().rotary {
        let [batch, heads, seq, head_dim] = case.shape;
        let table = RotaryTable::new(case.rotary_dims, case.base).unwrap();
        let input = values(batch * heads * seq * head_dim, case.seed, 1.0);
        for (backend, device) in backends() {
            let got = backend.run(Rotary {
                input: tensor(input.clone(), case.shape, &device),
                angles: &table.angles(&case.starts, seq, &device),
            });
            assert_close(
                &format!("{} on {backend:?}", case.name),
                &read(got),
                &case.output,
                2e-6,
            );
        }
        // One start for every row is each row from that start.
        let cpu = Device::flex();
        let same = Rotary {
            input: tensor(input.clone(), case.shape, &cpu),
            angles: &table.angles(&case.starts[..1], seq, &cpu),
        };
        let each = Rotary {
            input: tensor(input, case.shape, &cpu),
            angles: &table.angles(&vec![case.starts[0]; batch], seq, &cpu),
        };
        assert_eq!(read(Backend::Cpu.run(same)), read(Backend::Cpu.run(each)));
    }
}

#[test]
fn rms_norm_activations_and_repeated_heads_equal_transformers() {
    let f = fixture();
    let [rows, width] = f.rms_norm.shape;
    for (backend, device) in backends() {
        let norm = backend.run(RmsNormOp {
            input: tensor(
                values(rows * width, f.rms_norm.seeds[0], 3.0),
                [rows, width],
                &device,
            ),
            weight: tensor(values(width, f.rms_norm.seeds[1], 1.5), [width], &device),
            epsilon: f.rms_norm.epsilon,
        });
        assert_close(
            &format!("RMS norm on {backend:?}"),
            &read(norm),
            &f.rms_norm.output,
            2e-6,
        );
        let gelu = backend.run(GeluExact(tensor(
            values(f.gelu.count, f.gelu.seed, 9.0),
            [f.gelu.count],
            &device,
        )));
        assert_close(
            &format!("exact GELU on {backend:?}"),
            &read(gelu),
            &f.gelu.output,
            2e-6,
        );
        let n = f.silu_gate.count;
        let gated = backend.run(SiluGate {
            gate: tensor(values(n, f.silu_gate.seeds[0], 6.0), [n], &device),
            up: tensor(values(n, f.silu_gate.seeds[1], 2.0), [n], &device),
        });
        assert_close(
            &format!("SiLU gate on {backend:?}"),
            &read(gated),
            &f.silu_gate.output,
            2e-6,
        );
        let shape = f.repeat_kv.shape;
        let kv = tensor(
            values(shape.iter().product(), f.repeat_kv.seed, 1.0),
            shape,
            &device,
        );
        assert_eq!(
            read(repeat_heads(kv, f.repeat_kv.group)),
            f.repeat_kv.output,
            "repeated heads on {backend:?}"
        );
    }
}

#[test]
fn a_rotary_table_refuses_odd_dimensions_and_bad_bases() {
    use clozelab::model::ops::rotary::RotaryError;
    assert_eq!(RotaryTable::new(5, 1e4), Err(RotaryError::Dims(5)));
    assert_eq!(RotaryTable::new(0, 1e4), Err(RotaryError::Dims(0)));
    assert_eq!(RotaryTable::new(4, -1.0), Err(RotaryError::Base(-1.0)));
    assert!(matches!(
        RotaryTable::new(4, f64::NAN),
        Err(RotaryError::Base(_))
    ));
}
