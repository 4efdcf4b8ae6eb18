//! One part of a batch job: `--shard K/N`, or a Slurm job array's task (`SLURM_ARRAY_TASK_ID`
//! of `--shards N`, or of the array's `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_COUNT`),
//! and which items it takes: N
//! contiguous runs of the corpus balanced by their weight (token counts), the same for every
//! part without any of them talking to another.

use std::ops::Range;

/// Part `index` (from 1) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("a shard is K/N with 1 ≤ K ≤ N (such as 3/8), not {0:?}")]
    Malformed(String),
    #[error("{name} is {value:?}, not a whole number")]
    SlurmVariable { name: &'static str, value: String },
    #[error(
        "the Slurm array (task {id}, {count} tasks from {min}) does not number the job's parts 1 to N: give --shards N with an array of 1-N (a task resubmitted alone keeps its part), or --shard K/N"
    )]
    SlurmOutside { id: usize, min: usize, count: usize },
    #[error(
        "--shards N takes its part from a Slurm array task (SLURM_ARRAY_TASK_ID); outside one, give --shard K/N"
    )]
    NotATask,
    #[error("array task {id} is no part of {count}: run the array as --array=1-{count}")]
    TaskPastShards { id: usize, count: usize },
}

impl Shard {
    /// The whole job in one part.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// `"K/N"`.
    ///
    /// ```
    /// use clozelab::data::shard::Shard;
    /// assert_eq!(Shard::parse("3/8").unwrap(), Shard { index: 3, count: 8 });
    /// assert!(Shard::parse("0/8").is_err() && Shard::parse("9/8").is_err() && Shard::parse("3").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, ShardError> {
        let malformed = || ShardError::Malformed(text.to_string());
        let (k, n) = text.trim().split_once('/').ok_or_else(malformed)?;
        let index: usize = k.trim().parse().map_err(|_| malformed())?;
        let count: usize = n.trim().parse().map_err(|_| malformed())?;
        if index == 0 || index > count {
            return Err(malformed());
        }
        Ok(Shard { index, count })
    }

    /// The job array's task as a shard, from the environment Slurm gives each task (`var`
    /// looks a variable up); `None` outside an array.
    ///
    /// With `count` (`--shards N`), the task's id is its part: an array of `1-N`, in which a
    /// task resubmitted alone (`--array=K`) is still part K. Without, the array is the job:
    /// ids from the array's first (`--array=0-7` and `--array=1-8` both give 1/8 to 8/8); an
    /// array that starts past 1 (a part of one resubmitted) or skips ids (`0-15:2`) is refused,
    /// since its parts cannot be told from it.
    pub fn from_slurm(
        var: impl Fn(&str) -> Option<String>,
        count: Option<usize>,
    ) -> Result<Option<Self>, ShardError> {
        let number = |name: &'static str| -> Result<Option<usize>, ShardError> {
            var(name)
                .map(|value| {
                    value.trim().parse().map_err(|_| ShardError::SlurmVariable {
                        name,
                        value: value.clone(),
                    })
                })
                .transpose()
        };
        let id = number("SLURM_ARRAY_TASK_ID")?;
        if let Some(count) = count {
            let id = id.ok_or(ShardError::NotATask)?;
            if id == 0 || id > count {
                return Err(ShardError::TaskPastShards { id, count });
            }
            return Ok(Some(Shard { index: id, count }));
        }
        let (Some(id), Some(count)) = (id, number("SLURM_ARRAY_TASK_COUNT")?) else {
            return Ok(None);
        };
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let max = number("SLURM_ARRAY_TASK_MAX")?.unwrap_or(min + count.max(1) - 1);
        if count == 0 || min > 1 || id < min || id >= min + count || max != min + count - 1 {
            return Err(ShardError::SlurmOutside { id, min, count });
        }
        Ok(Some(Shard {
            index: id - min + 1,
            count,
        }))
    }

    /// The items this part takes of items weighing `weights`: part k holds the items whose
    /// cumulative weight before them lies in [(k−1)/N, k/N) of the total — contiguous, in order,
    /// each item in exactly one part; a part may be empty when N exceeds the items.
    ///
    /// ```
    /// use clozelab::data::shard::Shard;
    /// let weights = [5, 1, 1, 1, 1, 1];
    /// let parts: Vec<_> = (1..=2).map(|k| Shard { index: k, count: 2 }.items(&weights)).collect();
    /// assert_eq!(parts, vec![0..1, 1..6]);
    /// ```
    pub fn items(&self, weights: &[usize]) -> Range<usize> {
        let total: u128 = weights.iter().map(|&w| w as u128).sum();
        let bound = |k: usize| -> usize {
            if k == 0 {
                return 0;
            }
            if k == self.count {
                return weights.len();
            }
            // The first item whose cumulative weight before it reaches k/N of the total.
            let target = total * k as u128;
            let mut before = 0u128;
            for (i, &w) in weights.iter().enumerate() {
                if before * self.count as u128 >= target {
                    return i;
                }
                before += w as u128;
            }
            weights.len()
        };
        bound(self.index - 1)..bound(self.index)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_every_item_once_and_balance_their_weight() {
        let weights: Vec<usize> = (0..97).map(|i| 3 + (i * 37) % 41).collect();
        let total: usize = weights.iter().sum();
        for count in [1, 2, 3, 7, 96, 97, 150] {
            let mut next = 0;
            for index in 1..=count {
                let range = Shard { index, count }.items(&weights);
                assert_eq!(range.start, next, "{index}/{count}");
                let weight: usize = weights[range.clone()].iter().sum();
                // Within one item of an equal share.
                assert!(weight <= total / count + 44, "{index}/{count}: {weight}");
                next = range.end;
            }
            assert_eq!(next, weights.len());
        }
        assert_eq!(Shard { index: 2, count: 3 }.items(&[]), 0..0);
    }

    #[test]
    fn slurm_tasks_become_shards_and_odd_arrays_are_refused() {
        fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        }
        assert_eq!(Shard::from_slurm(env(&[]), None), Ok(None));
        let zero_based = [
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(
            Shard::from_slurm(env(&zero_based), None),
            Ok(Some(Shard { index: 1, count: 4 }))
        );
        let one_based = [
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(
            Shard::from_slurm(env(&one_based), None),
            Ok(Some(Shard { index: 4, count: 4 }))
        );
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "6"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert!(Shard::from_slurm(env(&stepped), None).is_err());
        let junk = [
            ("SLURM_ARRAY_TASK_ID", "x"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert!(matches!(
            Shard::from_slurm(env(&junk), None),
            Err(ShardError::SlurmVariable { .. })
        ));
        // One task resubmitted alone: refused without --shards, its own part with it.
        let alone = [
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "2"),
            ("SLURM_ARRAY_TASK_MAX", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "1"),
        ];
        assert!(Shard::from_slurm(env(&alone), None).is_err());
        assert_eq!(
            Shard::from_slurm(env(&alone), Some(3)),
            Ok(Some(Shard { index: 2, count: 3 }))
        );
        assert_eq!(
            Shard::from_slurm(env(&zero_based), Some(4)),
            Err(ShardError::TaskPastShards { id: 0, count: 4 })
        );
        assert_eq!(
            Shard::from_slurm(env(&[]), Some(4)),
            Err(ShardError::NotATask)
        );
        assert_eq!(Shard { index: 3, count: 8 }.to_string(), "3/8");
    }
}
