//! A Latin square: one item set in N conditions (each item a passage per condition) rotated
//! into N lists, so that each list has every item once, in one of its conditions, and each
//! condition equally often (PCIbex's `Template` + `Group`). List `k` shows item `i` in
//! condition `(i + k) mod N`. The lists it makes are the study's counterbalanced lists
//! ([`super::lists`]); the trial table names each answer's item and condition.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::lists::PassageList;

/// An item set in conditions, as the study config writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatinSquare {
    /// The conditions' names, e.g. `["constraining", "neutral"]`.
    pub conditions: Vec<String>,
    /// Each item's passage ids, one per condition, in the conditions' order.
    pub items: Vec<Vec<String>>,
}

/// Why an item set cannot be rotated into lists.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum LatinSquareError {
    #[error("a Latin square needs at least two conditions, each named once")]
    Conditions,
    #[error("item {item} has {got} passages; each item needs one per condition ({conditions})")]
    Variants {
        item: usize,
        got: usize,
        conditions: usize,
    },
    #[error(
        "{items} items do not divide into {conditions} conditions: each list would show the \
         conditions unequally often (add or remove items to make a multiple of {conditions})"
    )]
    Uneven { items: usize, conditions: usize },
    #[error("passage {0:?} is used twice in the item set")]
    Repeated(String),
    #[error("the study names lists of its own and a Latin square whose lists differ from them")]
    ListsDiffer,
}

/// The name of the `k`-th list: A, B, …, Z, then L27, ….
pub fn list_name(k: usize) -> String {
    match u8::try_from(k).ok().filter(|&k| k < 26) {
        Some(k) => char::from(b'A' + k).to_string(),
        None => format!("L{}", k + 1),
    }
}

impl LatinSquare {
    /// The N lists, each item once per list, in condition `(item + list) mod N`.
    ///
    /// ```
    /// use clozelab::game::latin_square::LatinSquare;
    /// let square = LatinSquare {
    ///     conditions: vec!["high".into(), "low".into()],
    ///     items: vec![vec!["i1h".into(), "i1l".into()], vec!["i2h".into(), "i2l".into()]],
    /// };
    /// let lists = square.lists().unwrap();
    /// assert_eq!(lists[0].passages, ["i1h", "i2l"]);
    /// assert_eq!(lists[1].passages, ["i1l", "i2h"]);
    /// let uneven = LatinSquare { items: square.items[..1].to_vec(), ..square };
    /// assert!(uneven.lists().is_err());
    /// ```
    pub fn lists(&self) -> Result<Vec<PassageList>, LatinSquareError> {
        let n = self.conditions.len();
        let names: BTreeSet<&str> = self.conditions.iter().map(|c| c.trim()).collect();
        if n < 2 || names.len() != n || names.contains("") {
            return Err(LatinSquareError::Conditions);
        }
        let mut seen = BTreeSet::new();
        for (i, item) in self.items.iter().enumerate() {
            if item.len() != n {
                return Err(LatinSquareError::Variants {
                    item: i + 1,
                    got: item.len(),
                    conditions: n,
                });
            }
            if let Some(twice) = item.iter().find(|p| !seen.insert(p.as_str())) {
                return Err(LatinSquareError::Repeated(twice.clone()));
            }
        }
        if self.items.is_empty() || !self.items.len().is_multiple_of(n) {
            return Err(LatinSquareError::Uneven {
                items: self.items.len(),
                conditions: n,
            });
        }
        Ok((0..n)
            .map(|k| PassageList {
                name: list_name(k),
                passages: self
                    .items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| item[(i + k) % n].clone())
                    .collect(),
            })
            .collect())
    }

    /// The item (1-based) and condition of a passage of the square (`None` where a square read
    /// from someone's file has more versions than conditions).
    pub fn place_of(&self, passage: &str) -> Option<(usize, &str)> {
        self.items.iter().enumerate().find_map(|(i, item)| {
            let c = item.iter().position(|p| p == passage)?;
            Some((i + 1, self.conditions.get(c)?.as_str()))
        })
    }
}

/// Checks that `lists` show every item of `square` exactly once each and every condition
/// equally often (what a list edited by hand after rotation could break).
pub fn check_balanced(square: &LatinSquare, lists: &[PassageList]) -> Result<(), LatinSquareError> {
    for list in lists {
        let mut items = vec![0usize; square.items.len()];
        let mut conditions = vec![0usize; square.conditions.len()];
        for passage in &list.passages {
            let Some((item, condition)) = square.place_of(passage) else {
                return Err(LatinSquareError::ListsDiffer);
            };
            items[item - 1] += 1;
            if let Some(c) = square.conditions.iter().position(|n| n == condition) {
                conditions[c] += 1;
            }
        }
        if items.iter().any(|&k| k != 1) || conditions.iter().any(|&k| k != conditions[0]) {
            return Err(LatinSquareError::ListsDiffer);
        }
    }
    Ok(())
}
