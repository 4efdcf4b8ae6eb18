//! The blocks' weights and the LM head packed into panels (the browser's CPU path, reached
//! natively through `Transformer::with_panel_weights`) give the hidden states and logits of the unpacked
//! model.

use burn::tensor::Device;
use clozelab::model::Transformer;
use clozelab::model::loader::load_with_config;
use clozelab::model::testmodel::{generate_weights, test_config, to_safetensors};

#[test]
fn weights_packed_into_panels_give_the_same_hidden_states_and_logits() {
    // 20 wide: the 60-wide projection and the 80-wide MLP end in part-filled panels.
    let config = test_config(2, 20, 2);
    let device = Device::flex();
    let bytes = to_safetensors(&generate_weights(&config, 3)).unwrap();
    let model = load_with_config(&config, &bytes, &device).unwrap();
    let packed = model.clone().with_panel_weights().unwrap();
    assert!(packed.h.iter().all(|b| b.mlp.c_fc.panels.is_some()));
    assert_eq!(packed.h[0].mlp.c_fc.weight.val().dims(), [0, 0]);
    assert_eq!(packed.h[0].mlp.c_fc.dims(), [20, 80]);
    assert_eq!(
        packed.wte.panels.as_ref().map(|p| p.dims()),
        Some([20, 50257])
    );
    // A prefill of five tokens in two rows (one full tile and a part-filled one), then one
    // decoding step per row (two rows), then one more in a single row (the one-row kernel).
    let run = |m: &Transformer| {
        let (prefill, step) = prefill_then_step(m);
        let mut single = m.new_cache(None, 1, 1);
        let one = m
            .forward_cached(m.token_tensor(&[vec![11]]).unwrap(), &mut single)
            .unwrap();
        let logits = m.logits(prefill.clone()).unwrap();
        [prefill, step, one, logits].map(|t| t.into_data().try_to_vec::<f32>().unwrap())
    };
    for (want, got) in run(&model).iter().zip(run(&packed).iter()) {
        assert_eq!(want.len(), got.len());
        for (w, g) in want.iter().zip(got) {
            assert!((w - g).abs() < 1e-5, "{w} vs {g}");
        }
    }
}

#[test]
fn packed_weights_shared_with_helpers_give_the_same_values_to_the_bit() {
    use clozelab::model::ops::product_helpers::ProductHelpers;
    use clozelab::model::ops::thread_helpers::ThreadHelpers;
    use std::sync::Arc;
    // 96 wide: a prefill of ten rows splits every projection (92 160 multiply-adds at the
    // narrowest) and the LM head; the decoding steps split only the head.
    let config = test_config(2, 96, 2);
    let device = Device::flex();
    let bytes = to_safetensors(&generate_weights(&config, 5)).unwrap();
    let packed = load_with_config(&config, &bytes, &device)
        .unwrap()
        .with_panel_weights()
        .unwrap();
    let mut shared = packed.clone();
    // Capacity for three rows of the widest part: the prefill goes over in chunks.
    let helpers: Arc<dyn ProductHelpers> = Arc::new(ThreadHelpers::new(2, 3 * 384));
    assert_eq!(shared.share_products(&helpers).unwrap(), 1 + 4 * 2);
    assert!(!packed.h[0].mlp.c_fc.panels.as_ref().unwrap().is_shared());
    let run = |m: &Transformer| {
        let (prefill, step) = prefill_then_step(m);
        let logits = m.logits(step.clone()).unwrap();
        [prefill, step, logits].map(|t| t.into_data().try_to_vec::<f32>().unwrap())
    };
    assert_eq!(run(&packed), run(&shared));
}

/// A prefill of five tokens in two rows, then one decoding step per row: the hidden states of
/// both.
fn prefill_then_step(m: &Transformer) -> (burn::tensor::Tensor<3>, burn::tensor::Tensor<3>) {
    let mut cache = m.new_cache(None, 2, 6);
    let ids = m
        .token_tensor(&[vec![1, 5, 9, 2, 7], vec![3, 3, 8, 0, 4]])
        .unwrap();
    let prefill = m.forward_cached(ids, &mut cache).unwrap();
    let step = m
        .forward_cached(m.token_tensor(&[vec![6], vec![2]]).unwrap(), &mut cache)
        .unwrap();
    (prefill, step)
}
