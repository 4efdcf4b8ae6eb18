//! Word clusters for semantic TVD (Ilia & Aziz 2024, Appendix G): per context, the union of
//! people's and the model's words clustered by their embeddings with k-means, k chosen at the
//! elbow of the within-cluster squared error over k in range(2, k_max, k_max // 3); a
//! distribution's probability of a cluster is the sum over its words, and the TVD is taken
//! between cluster distributions.

use std::collections::BTreeMap;

use super::metrics::WordDistribution;
use crate::rng::SplitMix64;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ClusterError {
    #[error("no points to cluster")]
    Empty,
    #[error("k must be between 1 and the number of points ({points}), got {k}")]
    BadK { k: usize, points: usize },
    #[error("the points do not all have {0} dimensions, or hold a NaN or infinite value")]
    BadPoint(usize),
}

/// A k-means partition: each point's cluster and the within-cluster sum of squared errors.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    pub assignment: Vec<usize>,
    pub sse: f64,
}

/// A uniform draw in [0, 1) with 53 random bits.
fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn validate(points: &[Vec<f64>]) -> Result<usize, ClusterError> {
    let dim = points.first().ok_or(ClusterError::Empty)?.len();
    if points
        .iter()
        .any(|p| p.len() != dim || p.iter().any(|x| !x.is_finite()))
    {
        return Err(ClusterError::BadPoint(dim));
    }
    Ok(dim)
}

/// Lloyd's k-means with k-means++ seeding from `seed` (deterministic), at most 100 rounds.
///
/// Computed on the points' Gram matrix (after centring them, which moves no distance): a
/// centre is the mean of its members, so ‖x − c‖² = ⟨x, x⟩ − 2 mean_j ⟨x, x_j⟩ + mean_{j,l}
/// ⟨x_j, x_l⟩, and a round costs O(n²) whatever the dimension — GPT-2's 768-dimensional word
/// vectors cost no more than 2-dimensional ones once the Gram matrix is built.
///
/// ```
/// use clozelab::analysis::clusters::kmeans;
/// let points = vec![vec![0.0], vec![0.1], vec![5.0], vec![5.2]];
/// let p = kmeans(&points, 2, 1).unwrap();
/// assert_eq!(p.assignment[0], p.assignment[1]);
/// assert_ne!(p.assignment[0], p.assignment[2]);
/// assert!((p.sse - (0.005 + 0.02)).abs() < 1e-12);
/// ```
pub fn kmeans(points: &[Vec<f64>], k: usize, seed: u64) -> Result<Partition, ClusterError> {
    let dim = validate(points)?;
    let n = points.len();
    if k == 0 || k > n {
        return Err(ClusterError::BadK { k, points: n });
    }
    let mean: Vec<f64> = (0..dim)
        .map(|d| points.iter().map(|p| p[d]).sum::<f64>() / n as f64)
        .collect();
    let centred: Vec<Vec<f64>> = points
        .iter()
        .map(|p| p.iter().zip(&mean).map(|(x, m)| x - m).collect())
        .collect();
    let mut gram = vec![0.0; n * n];
    for i in 0..n {
        for j in i..n {
            let g: f64 = centred[i].iter().zip(&centred[j]).map(|(a, b)| a * b).sum();
            gram[i * n + j] = g;
            gram[j * n + i] = g;
        }
    }
    let g = |i: usize, j: usize| gram[i * n + j];
    let point_distance = |i: usize, j: usize| (g(i, i) - 2.0 * g(i, j) + g(j, j)).max(0.0);
    let mut rng = SplitMix64::new(seed);
    // k-means++: each next centre drawn with probability ∝ squared distance to the nearest.
    let mut seeds = vec![(unit(&mut rng) * n as f64) as usize % n];
    while seeds.len() < k {
        let weights: Vec<f64> = (0..n)
            .map(|i| {
                seeds
                    .iter()
                    .map(|&c| point_distance(i, c))
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let total: f64 = weights.iter().sum();
        let next = if total > 0.0 {
            let mut target = unit(&mut rng) * total;
            weights
                .iter()
                .position(|w| {
                    target -= w;
                    target <= 0.0
                })
                .unwrap_or(n - 1)
        } else {
            // Every point already sits on a centre: any point will do.
            seeds.len()
        };
        seeds.push(next);
    }
    // A centre as the points it averages, and its squared norm mean_{j,l} ⟨x_j, x_l⟩.
    let centre_of = |members: Vec<usize>| {
        let m = members.len() as f64;
        let norm = members
            .iter()
            .map(|&j| members.iter().map(|&l| g(j, l)).sum::<f64>())
            .sum::<f64>()
            / (m * m);
        (members, norm)
    };
    let mut centres: Vec<(Vec<usize>, f64)> = seeds.iter().map(|&c| centre_of(vec![c])).collect();
    let distance = |i: usize, (members, norm): &(Vec<usize>, f64)| {
        let cross = members.iter().map(|&j| g(i, j)).sum::<f64>() / members.len() as f64;
        (g(i, i) - 2.0 * cross + norm).max(0.0)
    };
    let assign = |centres: &[(Vec<usize>, f64)]| -> Vec<(usize, f64)> {
        (0..n)
            .map(|i| {
                centres
                    .iter()
                    .enumerate()
                    .map(|(c, centre)| (c, distance(i, centre)))
                    .fold((0, f64::INFINITY), |best, next| {
                        if next.1 < best.1 { next } else { best }
                    })
            })
            .collect()
    };
    let mut assignment = assign(&centres);
    for _ in 0..100 {
        let mut members = vec![Vec::new(); k];
        for (i, (c, _)) in assignment.iter().enumerate() {
            members[*c].push(i);
        }
        for (centre, members) in centres.iter_mut().zip(members) {
            // An emptied cluster keeps its centre.
            if !members.is_empty() {
                *centre = centre_of(members);
            }
        }
        let next = assign(&centres);
        let unchanged = next.iter().zip(&assignment).all(|(a, b)| a.0 == b.0);
        assignment = next;
        if unchanged {
            break;
        }
    }
    Ok(Partition {
        sse: assignment.iter().map(|(_, d)| d).sum(),
        assignment: assignment.into_iter().map(|(c, _)| c).collect(),
    })
}

/// The candidate k of Appendix G: range(2, k_max, k_max // 3) as Python counts (k_max
/// excluded; a step of at least 1).
///
/// ```
/// use clozelab::analysis::clusters::candidate_ks;
/// assert_eq!(candidate_ks(10), vec![2, 5, 8]);
/// assert_eq!(candidate_ks(2), Vec::<usize>::new());
/// ```
pub fn candidate_ks(k_max: usize) -> Vec<usize> {
    (2..k_max).step_by((k_max / 3).max(1)).collect()
}

/// The partition at the elbow of SSE over the candidate k: the k whose (k, SSE) point lies
/// farthest below the straight line from the first candidate to the last (the first candidate
/// when none in between lies below it, or with only one or two candidates; with none — fewer
/// than 3 points — one cluster).
pub fn elbow(points: &[Vec<f64>], seed: u64) -> Result<Partition, ClusterError> {
    validate(points)?;
    let ks = candidate_ks(points.len());
    let partitions: Vec<(usize, Partition)> = ks
        .iter()
        .map(|&k| kmeans(points, k, seed).map(|p| (k, p)))
        .collect::<Result<_, _>>()?;
    let (Some(first), Some(last)) = (partitions.first(), partitions.last()) else {
        return kmeans(points, 1, seed);
    };
    let line = |k: usize| {
        let (k0, k1) = (first.0 as f64, last.0 as f64);
        if k1 == k0 {
            first.1.sse
        } else {
            first.1.sse + (last.1.sse - first.1.sse) * (k as f64 - k0) / (k1 - k0)
        }
    };
    // The endpoints lie on the line by construction: only an interior candidate clearly below
    // it (beyond rounding) is an elbow; otherwise the first candidate.
    let tolerance = 1e-9 * first.1.sse.abs().max(last.1.sse.abs()).max(1e-300);
    let best = partitions[1..partitions.len().saturating_sub(1).max(1)]
        .iter()
        .filter(|(k, p)| line(*k) - p.sse > tolerance)
        .max_by(|a, b| {
            (line(a.0) - a.1.sse)
                .total_cmp(&(line(b.0) - b.1.sse))
                .then(b.0.cmp(&a.0))
        })
        .or(Some(first))
        .map(|(_, p)| p.clone());
    best.ok_or(ClusterError::Empty)
}

/// TVD between two word distributions after merging words into classes (meaning clusters,
/// parts of speech): ½ Σ_c |P(c) − Q(c)| with P(c) = Σ_{w ∈ c} p(w). Words without a class
/// count as classes of their own.
///
/// ```
/// use std::collections::BTreeMap;
/// use clozelab::analysis::clusters::class_tvd;
/// use clozelab::analysis::metrics::WordDistribution;
/// let p = WordDistribution::from_samples(["cat", "cat"]).unwrap();
/// let q = WordDistribution::from_samples(["dog", "dog"]).unwrap();
/// let animals = BTreeMap::from([("cat".to_string(), 0), ("dog".to_string(), 0)]);
/// assert_eq!(class_tvd(&p, &q, &animals), 0.0);
/// assert_eq!(class_tvd(&p, &q, &BTreeMap::<String, u8>::new()), 1.0);
/// // Half the mass of p is in a class q never reaches.
/// let p = WordDistribution::from_samples(["cat", "runs"]).unwrap();
/// let tags = BTreeMap::from([
///     ("cat".to_string(), "NOUN"), ("dog".to_string(), "NOUN"), ("runs".to_string(), "VERB"),
/// ]);
/// assert_eq!(class_tvd(&p, &q, &tags), 0.5);
/// ```
pub fn class_tvd<C: Ord>(
    p: &WordDistribution,
    q: &WordDistribution,
    classes: &BTreeMap<String, C>,
) -> f64 {
    let mut mass: BTreeMap<Result<&C, &str>, (f64, f64)> = BTreeMap::new();
    for (w, pw) in p.support() {
        mass.entry(classes.get(w).ok_or(w)).or_default().0 += pw;
    }
    for (w, qw) in q.support() {
        mass.entry(classes.get(w).ok_or(w)).or_default().1 += qw;
    }
    0.5 * mass.values().map(|(a, b)| (a - b).abs()).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmeans_finds_separated_groups_and_rejects_bad_input() {
        let points: Vec<Vec<f64>> = [
            [0.0, 0.0],
            [0.2, 0.1],
            [10.0, 10.0],
            [10.1, 9.9],
            [-10.0, 5.0],
            [-9.8, 5.1],
        ]
        .iter()
        .map(|p| p.to_vec())
        .collect();
        for seed in 0..5 {
            let p = kmeans(&points, 3, seed).unwrap();
            assert_eq!(p.assignment[0], p.assignment[1]);
            assert_eq!(p.assignment[2], p.assignment[3]);
            assert_eq!(p.assignment[4], p.assignment[5]);
            assert!(p.sse < 0.2, "{p:?}");
        }
        // More clusters never raise the error; one cluster per point leaves none.
        let sse: Vec<f64> = (1..=6)
            .map(|k| kmeans(&points, k, 3).unwrap().sse)
            .collect();
        assert!(sse.windows(2).all(|w| w[1] <= w[0] + 1e-9), "{sse:?}");
        assert!(sse[5] < 1e-12);
        assert_eq!(kmeans(&[], 1, 0), Err(ClusterError::Empty));
        assert_eq!(
            kmeans(&points, 7, 0),
            Err(ClusterError::BadK { k: 7, points: 6 })
        );
        assert_eq!(
            kmeans(&[vec![0.0], vec![0.0, 1.0]], 1, 0),
            Err(ClusterError::BadPoint(1))
        );
        assert_eq!(
            kmeans(&[vec![f64::NAN]], 1, 0),
            Err(ClusterError::BadPoint(1))
        );
    }

    #[test]
    fn the_elbow_picks_the_number_of_groups() {
        // Three tight groups of four points: candidates 2, 6, 10 (k_max 12, step 4).
        let mut points = Vec::new();
        for centre in [0.0, 50.0, 100.0] {
            for i in 0..4 {
                points.push(vec![centre + i as f64 * 0.1, centre]);
            }
        }
        assert_eq!(candidate_ks(12), vec![2, 6, 10]);
        let p = elbow(&points, 1).unwrap();
        let groups: std::collections::BTreeSet<usize> = p.assignment.iter().copied().collect();
        assert_eq!(
            groups.len(),
            6,
            "k = 6 is the candidate at the elbow: {p:?}"
        );
        // Points of different groups never share a cluster.
        for i in 0..12 {
            for j in 0..12 {
                if p.assignment[i] == p.assignment[j] {
                    assert_eq!(i / 4, j / 4);
                }
            }
        }
        let two = elbow(&[vec![0.0], vec![1.0]], 0).unwrap();
        assert_eq!(
            two.assignment,
            [0, 0],
            "too few points for a candidate: one cluster"
        );
    }
}
