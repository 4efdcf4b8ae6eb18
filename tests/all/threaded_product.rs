//! Products that gemm would run on one thread, split over the CPU backend's threads: where they
//! are split, and that the split product equals the single call.

use burn::tensor::{Device, Distribution, Tensor};
use clozelab::model::ops::threaded_product::{GEMM_THREADS_FROM, Split, linear, matmul, split_for};

#[test]
fn a_decoding_steps_products_are_split_and_large_ones_are_not() {
    // One row against a layer's weight: columns, one block per thread.
    assert_eq!(
        split_for(1, 768, 2304, 2),
        Some(Split::Columns(vec![0..1152, 1152..2304]))
    );
    // The LM head, `chunk · hiddenᵀ` with one hidden state: the vocabulary rows.
    assert_eq!(
        split_for(21_845, 768, 1, 3),
        Some(Split::Rows(vec![0..7281, 7281..14563, 14563..21_845]))
    );
    // Over burn-flex's threshold with more than one row and column, gemm has the threads.
    assert_eq!(split_for(64, 768, 2304, 2), None);
    const { assert!(64 * 768 * 2304 >= GEMM_THREADS_FROM) };
    // Under it, even a few rows are split.
    assert!(matches!(split_for(3, 768, 768, 2), Some(Split::Columns(_))));
    // One thread, or blocks too narrow to be worth one: a single call.
    assert_eq!(split_for(1, 768, 2304, 1), None);
    assert_eq!(split_for(1, 768, 100, 2), None);
    assert_eq!(split_for(0, 768, 2304, 2), None);
}

#[test]
fn blocks_cover_the_wide_side_exactly_once() {
    for (m, n, threads) in [(1, 2304, 2), (1, 1000, 7), (50_257, 1, 16), (2, 3072, 3)] {
        let Some(Split::Columns(blocks) | Split::Rows(blocks)) = split_for(m, 768, n, threads)
        else {
            panic!("({m}, {n}) on {threads} threads should be split");
        };
        assert_eq!(blocks.first().unwrap().start, 0);
        assert_eq!(blocks.last().unwrap().end, m.max(n));
        assert!(blocks.windows(2).all(|w| w[0].end == w[1].start));
        assert!(blocks.iter().all(|b| b.len() >= 64));
    }
}

fn close(a: Tensor<2>, b: Tensor<2>) -> f32 {
    assert_eq!(a.dims(), b.dims());
    (a - b).abs().max().into_scalar()
}

/// On a pool of three threads (uneven blocks), each kind of split gives the single call's result.
#[test]
fn split_products_equal_the_single_call() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    pool.install(|| {
        let device = Device::flex();
        let random =
            |shape: [usize; 2]| Tensor::<2>::random(shape, Distribution::Normal(0.0, 1.0), &device);
        for (m, k, n, split) in [
            (1, 96, 700, true),
            (3, 64, 400, true),
            (5000, 48, 1, true),
            (2, 40, 1, false),
        ] {
            assert_eq!(split_for(m, k, n, 3).is_some(), split);
            let (lhs, rhs) = (random([m, k]), random([k, n]));
            let error = close(matmul(lhs.clone(), rhs.clone()), lhs.matmul(rhs));
            assert!(error < 1e-4, "[{m}, {k}] · [{k}, {n}]: off by {error}");
        }
        // A layer: `[batch, seq, in]` through a weight and bias, as burn's `linear`.
        let input = Tensor::<3>::random([1, 1, 96], Distribution::Normal(0.0, 1.0), &device);
        let (weight, bias) = (
            random([96, 500]),
            Tensor::<1>::random([500], Distribution::Normal(0.0, 1.0), &device),
        );
        let ours = linear(input.clone(), weight.clone(), bias.clone());
        let burns = burn::tensor::module::linear(input, weight, Some(bias));
        assert_eq!(ours.dims(), [1, 1, 500]);
        let error = close(ours.reshape([1, 500]), burns.reshape([1, 500]));
        assert!(error < 1e-4, "linear off by {error}");
    });
}

/// With gemm told to pack the weights from a few rows on (as the CLI and the worker do), a
/// short context's product (16 rows, where gemm would otherwise read the weight in place) still
/// equals the product computed in f64.
#[test]
fn packed_weights_give_the_same_products() {
    clozelab::model::ops::gemm_packing::pack_weights_from_few_rows();
    assert_eq!(gemm::get_lhs_packing_threshold_single_thread(), 1);
    assert_eq!(gemm::get_lhs_packing_threshold_multi_thread(), 1);
    let device = Device::flex();
    let (m, k, n) = (16, 768, 2304);
    let lhs = Tensor::<2>::random([m, k], Distribution::Normal(0.0, 1.0), &device);
    let rhs = Tensor::<2>::random([k, n], Distribution::Normal(0.0, 0.02), &device);
    let a = lhs.to_data().try_to_vec::<f32>().unwrap();
    let b = rhs.to_data().try_to_vec::<f32>().unwrap();
    let got = lhs.matmul(rhs).into_data().try_to_vec::<f32>().unwrap();
    for (i, row) in got.chunks(n).enumerate() {
        for (j, &value) in row.iter().enumerate() {
            let want: f64 = (0..k)
                .map(|t| f64::from(a[i * k + t]) * f64::from(b[t * n + j]))
                .sum();
            assert!(
                (f64::from(value) - want).abs() < 1e-4,
                "[{i}, {j}]: {value} against {want}"
            );
        }
    }
}

/// `GEMM_THREADS_FROM` copies a private constant of burn-flex (`PARALLEL_THRESHOLD` in its
/// `src/ops/matmul.rs`; no API exposes it): read it from the source of the burn-flex version
/// Cargo.lock builds, so an upgrade that moves it fails here instead of splitting products gemm
/// already runs on its threads.
#[test]
fn the_gemm_thread_limit_is_burn_flexs_own() {
    let root = crate::common::repo_root();
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"burn-flex\""))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"').to_string())
        .expect("burn-flex in Cargo.lock");
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo")
        });
    let source = std::fs::read_dir(cargo_home.join("registry/src"))
        .unwrap()
        .filter_map(|index| {
            let path = index
                .ok()?
                .path()
                .join(format!("burn-flex-{version}/src/ops/matmul.rs"));
            std::fs::read_to_string(path).ok()
        })
        .next()
        .unwrap_or_else(|| {
            panic!(
                "burn-flex {version}'s source under {}",
                cargo_home.display()
            )
        });
    let line = source
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with("const PARALLEL_THRESHOLD: usize =")
        })
        .expect("burn-flex's matmul.rs defines PARALLEL_THRESHOLD");
    let value: usize = line
        .split('=')
        .nth(1)
        .unwrap()
        .trim_end_matches(';')
        .split('*')
        .map(|factor| factor.trim().replace('_', "").parse::<usize>().unwrap())
        .product();
    assert_eq!(
        value, GEMM_THREADS_FROM,
        "burn-flex {version} hands gemm its threads from {value} multiply-adds: update GEMM_THREADS_FROM"
    );
}
