//! Counterbalancing: a study names lists of passages and each participant plays one. The list
//! comes from the URL (`?list=B`, e.g. one Prolific study or JATOS study link per list), else
//! from a batch's choice (the least-used list; [`least_used`]), else from a stable hash of the
//! participant's id; the export records which list and how it was chosen.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::rng::stable_hash;

/// The URL parameter that names a participant's list.
pub const LIST_PARAM: &str = "list";

/// One list of passages (ids of built-in passages or of the study's own).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassageList {
    pub name: String,
    pub passages: Vec<String>,
}

/// How a participant's list was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListAssignment {
    /// The study link named it (`?list=…`).
    UrlParameter,
    /// JATOS's batch session: the list fewest participants had so far.
    JatosBatch,
    /// A stable hash of the participant's id (lists then balance only on average).
    ParticipantHash,
    /// JATOS's batch session by adaptive norming: the list whose contexts were furthest from
    /// the study's precision target (the reason is kept beside it).
    AdaptiveNorming,
}

impl ListAssignment {
    /// How the list was chosen, in a few words for a researcher's table.
    ///
    /// ```
    /// use clozelab::game::design::lists::ListAssignment;
    /// assert_eq!(ListAssignment::JatosBatch.label(), "JATOS batch");
    /// ```
    pub fn label(self) -> &'static str {
        match self {
            Self::UrlParameter => "link",
            Self::JatosBatch => "JATOS batch",
            Self::ParticipantHash => "id hash",
            Self::AdaptiveNorming => "adaptive norming",
        }
    }
}

/// The list a participant plays, and how it was chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssignedList {
    pub name: String,
    pub how: ListAssignment,
    /// Why adaptive norming chose the list (its shortfall against the target then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Checks the lists' names: each non-empty, without control characters, used once.
pub fn check_names(lists: &[PassageList]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for list in lists {
        let name = list.name.trim();
        if name.is_empty() || name.chars().any(char::is_control) {
            return Err(format!("{:?}", list.name));
        }
        if !seen.insert(name) {
            return Err(format!("{name:?} (used twice)"));
        }
    }
    Ok(())
}

/// The list for `participant`: the one `params` names ([`LIST_PARAM`]), else `from_batch`
/// (JATOS's choice), else one picked by a stable hash of the id. `Err` names a list the URL
/// asked for that the study does not have. `None` when the study has no lists.
///
/// ```
/// use std::collections::BTreeMap;
/// use clozelab::game::design::lists::{ListAssignment, PassageList, assign};
/// let lists = ["A", "B"].map(|n| PassageList { name: n.into(), passages: vec!["storm".into()] });
/// let url = BTreeMap::from([("list".to_string(), "B".to_string())]);
/// let chosen = assign(&lists, "P1", &url, None).unwrap().unwrap();
/// assert_eq!((chosen.name.as_str(), chosen.how), ("B", ListAssignment::UrlParameter));
/// let hashed = assign(&lists, "P1", &BTreeMap::new(), None).unwrap().unwrap();
/// assert_eq!(hashed, assign(&lists, "P1", &BTreeMap::new(), None).unwrap().unwrap());
/// assert!(assign(&lists, "P1", &BTreeMap::from([("list".into(), "Z".into())]), None).is_err());
/// ```
pub fn assign(
    lists: &[PassageList],
    participant: &str,
    params: &BTreeMap<String, String>,
    from_batch: Option<&str>,
) -> Result<Option<AssignedList>, String> {
    if lists.is_empty() {
        return Ok(None);
    }
    let named = |name: &str, how| {
        lists
            .iter()
            .find(|l| l.name.trim() == name.trim())
            .map(|l| AssignedList {
                name: l.name.clone(),
                how,
                reason: None,
            })
            .ok_or_else(|| name.to_string())
    };
    if let Some(name) = params.get(LIST_PARAM) {
        return named(name, ListAssignment::UrlParameter).map(Some);
    }
    if let Some(name) = from_batch {
        return named(name, ListAssignment::JatosBatch).map(Some);
    }
    let index = (stable_hash(&format!("list:{participant}")) % lists.len() as u64) as usize;
    Ok(Some(AssignedList {
        name: lists[index].name.clone(),
        how: ListAssignment::ParticipantHash,
        reason: None,
    }))
}

/// Of `counts` (list name → participants so far), the least-used list, the first on ties.
///
/// ```
/// use std::collections::BTreeMap;
/// use clozelab::game::design::lists::{PassageList, least_used};
/// let lists = ["A", "B", "C"].map(|n| PassageList { name: n.into(), passages: vec![] });
/// let counts = BTreeMap::from([("A".to_string(), 2), ("B".to_string(), 1)]);
/// assert_eq!(least_used(&lists, &counts), Some("C"));
/// ```
pub fn least_used<'a>(lists: &'a [PassageList], counts: &BTreeMap<String, u64>) -> Option<&'a str> {
    lists
        .iter()
        .min_by_key(|l| counts.get(&l.name).copied().unwrap_or(0))
        .map(|l| l.name.as_str())
}

/// How unevenly a stable hash of participants' ids spreads `participants` over `lists` lists,
/// as the standard deviation of one list's count: the ids' hashes behave as independent
/// uniform draws, so a list's count is binomial, σ = √(n · (1/k) · (1 − 1/k)). `None` without
/// lists or participants.
///
/// ```
/// use clozelab::game::design::lists::hash_spread;
/// // 40 participants over 2 lists: 20 each on average, give or take about 3.2.
/// assert!((hash_spread(40, 2).unwrap() - 10f64.sqrt()).abs() < 1e-12);
/// assert_eq!(hash_spread(40, 0), None);
/// ```
pub fn hash_spread(participants: usize, lists: usize) -> Option<f64> {
    if participants == 0 || lists == 0 {
        return None;
    }
    let share = 1.0 / lists as f64;
    Some((participants as f64 * share * (1.0 - share)).sqrt())
}
