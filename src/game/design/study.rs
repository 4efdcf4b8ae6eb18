//! A study: which passages a participant sees, in what order, and what happens at the end.
//! Loaded from JSON (URL or file) and validated before anything is shown.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::attention::{AttentionCheck, AttentionError, check_all};
use super::latin_square::{LatinSquare, check_balanced};
use super::lists::{PassageList, assign, check_names};
use super::participant_texts::{ParticipantTexts, TextsError};
use super::passages::{Passage, built_in_passages};
use super::plan::Plan;
use super::questions::{Question, check_blocks};
use crate::rng::{SplitMix64, stable_hash};

/// The participant a preview plays as (the researcher on the Study page); what it answers is
/// not kept.
pub const PREVIEW_PARTICIPANT: &str = "preview";

/// The study id of play mode (passages played for fun, outside any study).
pub const PLAY_STUDY_ID: &str = "play";

/// Longest participant id kept from a URL; longer ones are rejected.
pub(super) const MAX_ID_LEN: usize = 128;

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum StudyError {
    #[error("the study config is not valid JSON: {0}")]
    Json(String),
    #[error("unknown passage id {0:?}")]
    UnknownPassage(String),
    #[error("passages_per_participant must be between 1 and {available}, got {got}")]
    PassageCount { got: usize, available: usize },
    #[error("redirect_url must be an http(s) address, got {0:?}")]
    RedirectUrl(String),
    #[error("decline_url must be an http(s) address, got {0:?}")]
    DeclineUrl(String),
    #[error(
        "submit_url must be a path on the app's own server (e.g. /submit) or an https:// address \
         of a study server, got {0:?}"
    )]
    SubmitUrl(String),
    #[error("the participant id is empty or longer than {MAX_ID_LEN} characters")]
    ParticipantId,
    #[error("positions_per_passage and rounds_per_position must be at least 1")]
    TokenGameCounts,
    #[error("model must be a folder on the app's own server (e.g. models/gpt2/), got {0:?}")]
    ModelUrl(String),
    #[error(
        "answers_in_browser says the answers stay in the browser, but submit_url sends them: keep one"
    )]
    AnswersTwoWays,
    #[error("send_each_response needs a submit_url to send them to")]
    SendEachWithoutSubmit,
    #[error("each list needs a name of its own, got {0}")]
    ListName(String),
    #[error("there is no list {0:?} in this study")]
    UnknownList(String),
    #[error("list {0:?} names no passages")]
    EmptyList(String),
    #[error("passage {passage:?} is named twice in {list}")]
    RepeatedPassage { passage: String, list: String },
    #[error(transparent)]
    StudyId(#[from] crate::game::design::run_scope::RunScopeError),
    #[error(transparent)]
    AdaptiveNorming(#[from] crate::game::design::adaptive_norming::AdaptiveNormingError),
    #[error(transparent)]
    Attention(#[from] AttentionError),
    #[error(transparent)]
    Texts(#[from] TextsError),
    #[error(transparent)]
    Questions(#[from] super::questions::QuestionError),
    #[error(transparent)]
    LatinSquare(#[from] super::latin_square::LatinSquareError),
    #[error("screened_out_url must be an http(s) address, got {0:?}")]
    ScreenedOutUrl(String),
}

/// Passage order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    #[default]
    Fixed,
    /// Shuffled per participant from a seed derived from the participant id (and recorded).
    Random,
}

/// The study config as researchers write it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyConfig {
    #[serde(default)]
    pub title: String,
    /// A stable id of this study (the Study page makes one), under which every participant's
    /// answers are kept apart from other studies' (see [`crate::game::design::run_scope`]). Without it, a
    /// fingerprint of the config stands in.
    #[serde(default)]
    pub study_id: Option<String>,
    /// Ids of built-in passages or of `texts`; empty = all of them.
    #[serde(default)]
    pub passages: Vec<String>,
    /// The researcher's own passages.
    #[serde(default)]
    pub texts: Vec<Passage>,
    /// Counterbalanced lists of passage ids: each participant plays one list (instead of
    /// `passages`); see [`super::lists`].
    #[serde(default)]
    pub lists: Vec<PassageList>,
    /// An item set in conditions, rotated into `lists` (see [`super::latin_square`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latin_square: Option<LatinSquare>,
    #[serde(default)]
    pub order: Order,
    /// Each new participant gets the list whose contexts are furthest from a precision target
    /// (inside JATOS by the batch session, outside it by a state file served beside the config),
    /// until it is met; see [`super::adaptive_norming`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive_norming: Option<super::adaptive_norming::AdaptiveNorming>,
    /// Instructions with a known answer placed in passages; see [`super::attention`].
    #[serde(default)]
    pub attention_checks: Vec<AttentionCheck>,
    /// How many passages each participant plays (default: all).
    #[serde(default)]
    pub passages_per_participant: Option<usize>,
    /// A passage played first, marked practice, never counted.
    #[serde(default)]
    pub practice: Option<String>,
    /// The language participants read the app in: `en` (default), `de` or `nl`; see
    /// [`super::participant_texts`].
    #[serde(default)]
    pub language: Option<String>,
    /// Any participant-facing text replaced, by name (the names of the English set).
    #[serde(default)]
    pub participant_texts: BTreeMap<String, String>,
    /// Questions asked after the consent, before the passages (see [`super::questions`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions_before: Vec<Question>,
    /// Questions asked after the passages, before the end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions_after: Vec<Question>,
    /// Where a participant a question screened out is sent (e.g. Prolific's screen-out URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screened_out_url: Option<String>,
    #[serde(default)]
    pub consent: String,
    #[serde(default)]
    pub instructions: String,
    #[serde(default)]
    pub completion_code: String,
    /// Where to send the participant after the data is saved (e.g. Prolific's completion URL).
    #[serde(default)]
    pub redirect_url: Option<String>,
    /// Where to send a participant who does not agree, or withdraws (e.g. Prolific's
    /// no-consent URL). Without it they are told that nothing was kept, and may close the page.
    #[serde(default)]
    pub decline_url: Option<String>,
    /// Where to POST the participant's JSON export on completion: a path on the app's own
    /// server, or an `https://` address of a study server elsewhere (a package's
    /// Content-Security-Policy then names its origin). Without it nothing leaves the
    /// participant's browser unless they download it, which a package must say with
    /// `answers_in_browser` (see `game::packages::destination`).
    #[serde(default)]
    pub submit_url: Option<String>,
    /// The study keeps its answers in the participant's browser on purpose (a lab computer, where
    /// "Your data" downloads them): stated, so that a package never sends answers nowhere by
    /// mistake.
    #[serde(default)]
    pub answers_in_browser: bool,
    /// Also POST each answer to `submit_url` as soon as it is saved (a bundle of one response,
    /// keyed by participant/passage/position), so a participant who leaves early still leaves
    /// what they answered. Needs `submit_url`.
    #[serde(default)]
    pub send_each_response: bool,
    /// URL parameter holding the participant id (default `PROLIFIC_PID`).
    #[serde(default)]
    pub participant_param: Option<String>,
    /// Which game: `next_word` (default), `top1` or `two_token`.
    #[serde(default)]
    pub game: GameKind,
    /// Next-token games: positions played per passage (default: every position).
    #[serde(default)]
    pub positions_per_passage: Option<usize>,
    /// Two-token game: rounds (sampled other tokens) per position (default 1).
    #[serde(default)]
    pub rounds_per_position: Option<u32>,
    /// Next-token games: seed for positions, sampled tokens and sides (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Next-token games: the model folder participants' browsers load (a path on the app's own
    /// server; default the app's GPT-2, `models/gpt2/`). The two-token game samples from it.
    #[serde(default)]
    pub model: Option<String>,
    /// Set when the study runs inside JATOS (never read from the config file): results go to
    /// JATOS, the participant id and Prolific's ids come from JATOS's study link.
    #[serde(skip)]
    pub jatos: Option<crate::game::design::jatos_run::JatosRun>,
    /// What adaptive norming decided for this participant (never read from the config file):
    /// from JATOS's batch session, or outside JATOS from the state file served beside the
    /// config.
    #[serde(skip)]
    pub norming_assignment: Option<super::adaptive_norming::NormingAssignment>,
    /// Set when the researcher previews the study (never read from the config file): played as
    /// a participant would, marked pilot, nothing sent, nothing kept.
    #[serde(skip)]
    pub preview: bool,
}

/// The game a study runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameKind {
    #[default]
    NextWord,
    Top1,
    TwoToken,
}

impl GameKind {
    /// The game's short name in page addresses, storage keys and file names.
    ///
    /// ```
    /// use clozelab::game::design::study::GameKind;
    /// assert_eq!(GameKind::TwoToken.name(), "two-token");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::Top1 => "top1",
            Self::TwoToken => "two-token",
            Self::NextWord => "next-word",
        }
    }
}

/// What else a Latin square's balance needs of the study: no practice passage inside it, and
/// every participant shown a whole list.
fn check_square_design(square: &LatinSquare, config: &StudyConfig) -> Result<(), StudyError> {
    use super::latin_square::LatinSquareError;
    if let Some(practice) = config
        .practice
        .as_ref()
        .filter(|p| square.place_of(p).is_some())
    {
        return Err(LatinSquareError::PracticeInSquare(practice.clone()).into());
    }
    let per_list = config.lists.first().map_or(0, |list| {
        list.passages
            .iter()
            .filter(|p| Some(*p) != config.practice.as_ref())
            .count()
    });
    match config.passages_per_participant {
        Some(wanted) if wanted < per_list => {
            Err(LatinSquareError::PartOfAList { wanted, per_list }.into())
        }
        _ => Ok(()),
    }
}

impl StudyConfig {
    /// Parses and validates a config.
    pub fn from_json(text: &str) -> Result<Self, StudyError> {
        let mut config: Self = serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(text))
            .map_err(|e| StudyError::Json(e.to_string()))?;
        if let Some(square) = &config.latin_square {
            let lists = square.lists()?;
            if !config.lists.is_empty() && config.lists != lists {
                check_balanced(square, &config.lists)?;
            }
            if config.lists.is_empty() {
                config.lists = lists;
            }
            check_square_design(square, &config)?;
        }
        check_blocks(
            &config.questions_before,
            &config.questions_after,
            config.screened_out_url.is_some(),
        )?;
        if let Some(id) = &config.study_id {
            crate::game::design::run_scope::check_study_id(id)?;
        }
        config.check_pools()?;
        check_all(&config.attention_checks, |id| config.find(id).is_ok())?;
        ParticipantTexts::new(config.language.as_deref(), &config.participant_texts)?;
        if config.positions_per_passage == Some(0) || config.rounds_per_position == Some(0) {
            return Err(StudyError::TokenGameCounts);
        }
        let addresses = super::study_urls::Addresses {
            screened_out_url: config.screened_out_url.as_deref(),
            redirect_url: config.redirect_url.as_deref(),
            decline_url: config.decline_url.as_deref(),
            submit_url: config.submit_url.as_deref(),
            answers_in_browser: config.answers_in_browser,
        };
        super::study_urls::check_urls(&addresses).map_err(|problem| {
            use super::study_urls::UrlProblem;
            match problem {
                UrlProblem::ScreenedOut(url) => StudyError::ScreenedOutUrl(url),
                UrlProblem::Redirect(url) => StudyError::RedirectUrl(url),
                UrlProblem::Decline(url) => StudyError::DeclineUrl(url),
                UrlProblem::Submit(url) => StudyError::SubmitUrl(url),
                UrlProblem::TwoWays => StudyError::AnswersTwoWays,
            }
        })?;
        if config.send_each_response && config.submit_url.is_none() {
            return Err(StudyError::SendEachWithoutSubmit);
        }
        if let Some(norming) = &config.adaptive_norming {
            norming.check(
                config.lists.len(),
                config.game == GameKind::NextWord,
                |key| config.is_list_context(key),
                super::study_urls::is_web_address,
            )?;
        }
        if let Some(folder) = &config.model
            && (folder.trim().is_empty()
                || folder.contains("://")
                || folder.starts_with("//")
                || folder.chars().any(|c| c.is_control() || c == '\\'))
        {
            return Err(StudyError::ModelUrl(folder.clone()));
        }
        Ok(config)
    }

    /// The default study: all built-in passages, fixed order.
    pub fn default_play() -> Self {
        Self {
            title: "clozelab".into(),
            study_id: Some(PLAY_STUDY_ID.into()),
            passages: Vec::new(),
            texts: Vec::new(),
            lists: Vec::new(),
            latin_square: None,
            adaptive_norming: None,
            order: Order::Fixed,
            attention_checks: Vec::new(),
            passages_per_participant: None,
            practice: None,
            language: None,
            participant_texts: BTreeMap::new(),
            questions_before: Vec::new(),
            questions_after: Vec::new(),
            screened_out_url: None,
            consent: String::new(),
            instructions: String::new(),
            completion_code: String::new(),
            redirect_url: None,
            decline_url: None,
            submit_url: None,
            answers_in_browser: false,
            send_each_response: false,
            participant_param: None,
            game: GameKind::NextWord,
            positions_per_passage: None,
            rounds_per_position: None,
            seed: 0,
            model: None,
            jatos: None,
            norming_assignment: None,
            preview: false,
        }
    }

    /// The texts participants read (English when the config's language or texts were never
    /// validated, which [`Self::from_json`] does).
    pub fn participant_texts(&self) -> ParticipantTexts {
        ParticipantTexts::new(self.language.as_deref(), &self.participant_texts).unwrap_or_default()
    }

    /// Two-token game: rounds per position (1 unless the study says more).
    pub fn rounds(&self) -> u32 {
        self.rounds_per_position.unwrap_or(1).max(1)
    }

    /// A passage of the study (its own, or built in) by id.
    pub fn passage(&self, id: &str) -> Option<Passage> {
        self.find(id).ok()
    }

    /// Whether `key` (`passage:position`) names a context of one of the study's lists.
    fn is_list_context(&self, key: &str) -> bool {
        let Some((id, position)) = key.rsplit_once(':') else {
            return false;
        };
        let in_list = self
            .lists
            .iter()
            .any(|l| l.passages.iter().any(|p| p == id));
        let words = self.find(id).map_or(0, |p| p.words().len());
        in_list
            && position
                .parse::<usize>()
                .is_ok_and(|n| (2..=words).contains(&n))
    }

    fn find(&self, id: &str) -> Result<Passage, StudyError> {
        self.texts
            .iter()
            .cloned()
            .chain(built_in_passages())
            .find(|p| p.id == id)
            .ok_or_else(|| StudyError::UnknownPassage(id.to_string()))
    }

    /// The study's id: its `study_id`, else `config-` and a fingerprint of the config as
    /// written (two studies that differ in anything get different ids; taken before JATOS or
    /// a preview change the config).
    ///
    /// ```
    /// use clozelab::game::design::study::StudyConfig;
    /// let a = StudyConfig::from_json(r#"{"passages": ["storm"]}"#).unwrap();
    /// let b = StudyConfig::from_json(r#"{"passages": ["bees"]}"#).unwrap();
    /// assert!(a.study_id().starts_with("config-") && a.study_id() != b.study_id());
    /// let named = StudyConfig::from_json(r#"{"study_id": "cloze-1"}"#).unwrap();
    /// assert_eq!(named.study_id(), "cloze-1");
    /// ```
    pub fn study_id(&self) -> String {
        match &self.study_id {
            Some(id) => id.clone(),
            None => format!(
                "config-{:016x}",
                stable_hash(&serde_json::to_string(self).unwrap_or_default())
            ),
        }
    }

    /// Checks every list (or, without lists, the passages) as a pool to draw from: none
    /// empty, none naming a passage twice.
    fn check_pools(&self) -> Result<(), StudyError> {
        check_names(&self.lists).map_err(StudyError::ListName)?;
        check_repeats(&self.passages, "passages")?;
        if self.lists.is_empty() {
            return self.pool(&self.passages).map(|_| ());
        }
        self.lists.iter().try_for_each(|list| {
            if list.passages.is_empty() {
                return Err(StudyError::EmptyList(list.name.clone()));
            }
            check_repeats(&list.passages, &format!("list {:?}", list.name))?;
            self.pool(&list.passages).map(|_| ())
        })
    }

    /// The passages to draw from (practice excluded) when the study names `ids`, validated.
    fn pool(&self, ids: &[String]) -> Result<(Vec<Passage>, Option<Passage>), StudyError> {
        let practice = self
            .practice
            .as_deref()
            .map(|id| self.find(id))
            .transpose()?;
        let mut pool: Vec<Passage> = if ids.is_empty() {
            if self.texts.is_empty() {
                built_in_passages()
            } else {
                self.texts.clone()
            }
        } else {
            ids.iter()
                .map(|id| self.find(id))
                .collect::<Result<_, _>>()?
        };
        pool.retain(|p| Some(&p.id) != self.practice.as_ref());
        let available = pool.len();
        let wanted = self.passages_per_participant.unwrap_or(available);
        if wanted == 0 || wanted > available {
            return Err(StudyError::PassageCount {
                got: wanted,
                available,
            });
        }
        Ok((pool, practice))
    }

    /// This study run inside JATOS: every answer is sent as it is saved, appended to JATOS's
    /// result data (a small bundle of one per line), and the end goes through JATOS, which redirects on to
    /// the study's end redirect URL (where `jatos-package` put `redirect_url`).
    pub fn in_jatos(mut self, run: crate::game::design::jatos_run::JatosRun) -> Self {
        self.study_id = Some(self.study_id());
        self.submit_url = Some(run.result_data_url());
        self.send_each_response = true;
        self.redirect_url = Some(run.end_url());
        self.jatos = Some(run);
        self
    }

    /// The study as its researcher previews it: played as a participant would, as
    /// [`PREVIEW_PARTICIPANT`], its exports marked pilot; nothing is sent and nobody redirected.
    ///
    /// ```
    /// use clozelab::game::design::study::StudyConfig;
    /// let config = StudyConfig::from_json(r#"{"submit_url": "/submit", "send_each_response": true,
    ///     "redirect_url": "https://app.prolific.com/submissions/complete?cc=C1"}"#).unwrap();
    /// let preview = config.for_preview();
    /// assert!(preview.preview && preview.submit_url.is_none() && preview.redirect_url.is_none());
    /// assert_eq!(preview.participant_id(&Default::default(), "someone").unwrap(), "preview");
    /// ```
    pub fn for_preview(mut self) -> Self {
        self.study_id = Some(self.study_id());
        self.preview = true;
        self.submit_url = None;
        self.send_each_response = false;
        self.redirect_url = None;
        self.decline_url = None;
        self.screened_out_url = None;
        self.jatos = None;
        self
    }

    /// The plan for a participant (order shuffled from a seed derived from their id); inside
    /// JATOS, their list is the one the batch session gave them, unless the URL names one.
    pub fn plan(
        &self,
        participant: &str,
        params: &BTreeMap<String, String>,
    ) -> Result<Plan, StudyError> {
        let params = &self.parameters(params);
        let from_batch = self
            .jatos
            .as_ref()
            .and_then(|run| run.batch_list.as_deref());
        let mut list = assign(&self.lists, participant, params, from_batch)
            .map_err(StudyError::UnknownList)?;
        // Adaptive norming's list, where no link named one: inside JATOS the batch session's
        // (already `from_batch`), outside it the state file's.
        if let Some(super::adaptive_norming::NormingAssignment::List { name, reason }) =
            &self.norming_assignment
            && list
                .as_ref()
                .is_some_and(|l| l.how != super::lists::ListAssignment::UrlParameter)
            && let Some(known) = self.lists.iter().find(|l| &l.name == name)
        {
            list = Some(super::lists::AssignedList {
                name: known.name.clone(),
                how: super::lists::ListAssignment::AdaptiveNorming,
                reason: Some(reason.clone()),
            });
        }
        let ids = match &list {
            Some(chosen) => self
                .lists
                .iter()
                .find(|l| l.name == chosen.name)
                .map_or(&self.passages, |l| &l.passages),
            None => &self.passages,
        };
        let (mut pool, practice) = self.pool(ids)?;
        let order_seed = stable_hash(participant);
        if self.order == Order::Random {
            SplitMix64::new(order_seed).shuffle(&mut pool);
        }
        pool.truncate(self.passages_per_participant.unwrap_or(pool.len()));
        let items = practice
            .into_iter()
            .map(|p| (p, true))
            .chain(pool.into_iter().map(|p| (p, false)))
            .collect();
        let url_ids = ["STUDY_ID", "SESSION_ID"]
            .iter()
            .filter_map(|k| params.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        Ok(Plan {
            participant: participant.to_string(),
            url_ids,
            order_seed,
            items,
            list,
            study_id: self.study_id(),
            run: self.run_from_link(params).unwrap_or_default(),
        })
    }
}

/// `Err` when `ids` names a passage twice.
fn check_repeats(ids: &[String], list: &str) -> Result<(), StudyError> {
    let mut seen = std::collections::BTreeSet::new();
    match ids.iter().find(|id| !seen.insert(id.as_str())) {
        Some(id) => Err(StudyError::RepeatedPassage {
            passage: id.clone(),
            list: list.to_string(),
        }),
        None => Ok(()),
    }
}
