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
    #[error(
        "the study's own lists do not counterbalance its Latin square: {0} (it needs as many \
         lists as conditions, each showing every item once, every item in every condition in \
         exactly one list, and passages outside the square in every list)"
    )]
    ListsDiffer(String),
    #[error(
        "the practice passage {0:?} is in the Latin square: a practice passage is not analysed, \
         so its item would be missing from every list"
    )]
    PracticeInSquare(String),
    #[error(
        "passages_per_participant is {wanted}, but each list of the Latin square has {per_list} \
         passages: a participant drawing fewer would see the conditions unequally often (leave \
         it out, or set it to {per_list})"
    )]
    PartOfAList { wanted: usize, per_list: usize },
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
    /// use clozelab::game::design::latin_square::LatinSquare;
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

/// Checks that hand-written `lists` counterbalance `square` as a whole: as many lists as
/// conditions, each showing every item once, every item in every condition in exactly one
/// list, and any passage outside the square (a filler) in every list.
///
/// ```
/// use clozelab::game::design::latin_square::{LatinSquare, check_balanced};
/// use clozelab::game::design::lists::PassageList;
/// let square = LatinSquare {
///     conditions: vec!["high".into(), "low".into()],
///     items: vec![vec!["i1h".into(), "i1l".into()], vec!["i2h".into(), "i2l".into()]],
/// };
/// let list = |name: &str, passages: &[&str]| PassageList {
///     name: name.into(),
///     passages: passages.iter().map(|p| p.to_string()).collect(),
/// };
/// // The rotation, with a filler shared by both lists.
/// let good = [list("A", &["i1h", "i2l", "f"]), list("B", &["f", "i1l", "i2h"])];
/// assert!(check_balanced(&square, &good).is_ok());
/// // Two identical lists: condition confounded with item.
/// let same = [list("A", &["i1h", "i2l"]), list("B", &["i1h", "i2l"])];
/// assert!(check_balanced(&square, &same).is_err());
/// // One list alone.
/// assert!(check_balanced(&square, &good[..1]).is_err());
/// ```
pub fn check_balanced(square: &LatinSquare, lists: &[PassageList]) -> Result<(), LatinSquareError> {
    let n = square.conditions.len();
    let differ = |why: String| Err(LatinSquareError::ListsDiffer(why));
    if lists.len() != n {
        return differ(format!("{} lists for {n} conditions", lists.len()));
    }
    // (item, condition) → the lists showing it.
    let mut shown = vec![vec![0usize; n]; square.items.len()];
    let mut fillers: Option<BTreeSet<&str>> = None;
    for list in lists {
        let mut items = vec![0usize; square.items.len()];
        let mut own_fillers = BTreeSet::new();
        for passage in &list.passages {
            let Some((item, condition)) = square.place_of(passage) else {
                own_fillers.insert(passage.as_str());
                continue;
            };
            items[item - 1] += 1;
            if let Some(c) = square.conditions.iter().position(|n| n == condition) {
                shown[item - 1][c] += 1;
            }
        }
        if let Some(item) = items.iter().position(|&k| k != 1) {
            return differ(format!(
                "list {:?} shows item {} {} times",
                list.name,
                item + 1,
                items[item]
            ));
        }
        match &fillers {
            Some(first) if *first != own_fillers => {
                return differ(format!(
                    "list {:?} has other passages outside the square than list {:?}",
                    list.name, lists[0].name
                ));
            }
            None => fillers = Some(own_fillers),
            _ => {}
        }
    }
    for (item, conditions) in shown.iter().enumerate() {
        if let Some(c) = conditions.iter().position(|&k| k != 1) {
            return differ(format!(
                "item {} is in condition {:?} in {} lists",
                item + 1,
                square.conditions[c],
                conditions[c]
            ));
        }
    }
    Ok(())
}
