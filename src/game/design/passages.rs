//! Passages to play: ten written for clozelab (plain English, varied genres, ~50 words each,
//! free of copyright), researchers' own as plain text, or the passages of imported norms.

use serde::{Deserialize, Serialize};

use crate::data::ClozeNorms;

/// One passage; its words are the whitespace-separated tokens of `text`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Passage {
    pub id: String,
    pub title: String,
    pub text: String,
    /// Kind of text (narrative, notice, …), shown when choosing a passage.
    #[serde(default)]
    pub genre: String,
}

impl Passage {
    /// The words as written (split on whitespace).
    pub fn words(&self) -> Vec<&str> {
        self.text.split_whitespace().collect()
    }

    /// The context before word `position` (1-based): its first `position − 1` words.
    pub fn context(&self, position: usize) -> String {
        self.words()
            .into_iter()
            .take(position.saturating_sub(1))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PassageError {
    #[error("no passage found in the text (separate passages with a blank line)")]
    Empty,
    #[error("passage {0} has fewer than 2 words")]
    TooShort(usize),
}

const BUILT_IN: &[(&str, &str, &str, &str)] = &[
    (
        "kitchen",
        "memoir",
        "A Sunday kitchen",
        "Every Sunday my grandmother baked bread before anyone else was awake. By the time we came downstairs, the kitchen smelled of yeast and warm butter. She never used a recipe. She measured flour with an old blue cup and tested the dough by pressing it gently with her thumb.",
    ),
    (
        "storm",
        "weather report",
        "Weather report",
        "A line of strong thunderstorms will move across the region this afternoon. Residents should expect heavy rain, gusty winds and possible hail. The storms are likely to weaken after sunset, but flooding remains a risk in low areas. Drivers are advised to avoid roads that are covered by water.",
    ),
    (
        "bees",
        "science",
        "How bees find flowers",
        "Honeybees tell each other where food can be found by dancing. A worker returning to the hive moves in a figure eight, and the angle of her run shows the direction of the flowers. The length of the dance tells the other bees how far they will need to fly.",
    ),
    (
        "station",
        "fiction",
        "The last train",
        "The station was almost empty when Maya arrived. A single light flickered above the platform, and the clock said eleven minutes past midnight. She checked her ticket again. The last train was late, and the man selling newspapers had already closed his small wooden stand for the night.",
    ),
    (
        "library",
        "notice",
        "Library notice",
        "From the first of March, the public library will open one hour earlier on weekdays. Members can now borrow up to ten books at a time and renew them online. The reading room on the second floor will be closed for repairs until the end of April. We thank you for your patience.",
    ),
    (
        "river",
        "narrative",
        "A walk by the river",
        "We followed the river path until the town was far behind us. Ducks floated near the bank, and a heron stood perfectly still in the shallow water. After an hour we stopped to eat our sandwiches on a flat rock, listening to the water and the wind in the trees.",
    ),
    (
        "match",
        "sport report",
        "Match report",
        "The home team started slowly and fell behind after ten minutes. Their captain scored just before half time with a low shot into the corner. In the second half they played with more confidence, and a late header from the youngest player on the field gave them a famous victory.",
    ),
    (
        "volcano",
        "science",
        "Inside a volcano",
        "A volcano forms where melted rock from deep inside the earth rises to the surface. This hot liquid rock is called magma. When pressure builds up beneath the ground, the magma can burst out through cracks in an eruption. Once it reaches the surface, people call it lava instead.",
    ),
    (
        "letter",
        "letter",
        "A letter home",
        "Dear Mum, the first week at college has gone quickly. My room is small but bright, and my neighbour plays the guitar every evening. The lectures are harder than I expected, so I spend most afternoons in the library. Please tell Dad that I have finally learned to cook rice.",
    ),
    (
        "garden",
        "how-to",
        "Starting a garden",
        "If you want to grow vegetables, start with a small patch of ground that gets plenty of sun. Remove the weeds, turn the soil with a fork and add some compost. Beans, lettuce and radishes are good choices for beginners, because they grow quickly and need little care.",
    ),
];

/// The ten built-in passages.
pub fn built_in_passages() -> Vec<Passage> {
    BUILT_IN
        .iter()
        .map(|(id, genre, title, text)| Passage {
            id: id.to_string(),
            title: title.to_string(),
            text: text.to_string(),
            genre: genre.to_string(),
        })
        .collect()
}

/// Researchers' passages as plain text: passages separated by blank lines; a first line
/// starting with `#` is the title. Ids are `p1`, `p2`, … in order.
///
/// ```
/// use clozelab::game::design::passages::parse_plain_text;
/// let ps = parse_plain_text("# One\nThe cat sat.\n\nA second passage here.").unwrap();
/// assert_eq!((ps[0].title.as_str(), ps[1].id.as_str()), ("One", "p2"));
/// ```
pub fn parse_plain_text(text: &str) -> Result<Vec<Passage>, PassageError> {
    let text = text
        .strip_prefix('\u{feff}')
        .unwrap_or(text)
        .replace("\r\n", "\n");
    let mut out = Vec::new();
    for block in text.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
        let n = out.len() + 1;
        let (title, body) = match block.strip_prefix('#') {
            Some(rest) => {
                let (t, b) = rest.split_once('\n').unwrap_or((rest, ""));
                (t.trim().to_string(), b.trim())
            }
            None => (format!("Passage {n}"), block),
        };
        let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
        if body.split_whitespace().count() < 2 {
            return Err(PassageError::TooShort(n));
        }
        out.push(Passage {
            id: format!("p{n}"),
            title,
            text: body,
            genre: "your text".into(),
        });
    }
    if out.is_empty() {
        return Err(PassageError::Empty);
    }
    Ok(out)
}

/// The passages of imported norms (ids are the norms' text ids).
pub fn from_norms(norms: &ClozeNorms) -> Vec<Passage> {
    norms
        .passages
        .iter()
        .map(|(id, text)| Passage {
            id: id.to_string(),
            title: format!("Text {id}"),
            text: text.clone(),
            genre: "cloze norms".into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_passages_are_about_fifty_plain_words() {
        let ps = built_in_passages();
        assert!(ps.len() >= 10);
        let ids: std::collections::BTreeSet<&str> = ps.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids.len(), ps.len(), "ids are unique");
        for p in &ps {
            let n = p.words().len();
            assert!((40..=65).contains(&n), "{} has {n} words", p.id);
            assert!(p.text.is_ascii(), "{} is plain text", p.id);
        }
        assert_eq!(ps[0].context(1), "");
        assert_eq!(ps[0].context(3), "Every Sunday");
    }

    #[test]
    fn plain_text_import() {
        assert_eq!(parse_plain_text("  \n\n "), Err(PassageError::Empty));
        assert_eq!(parse_plain_text("Hello"), Err(PassageError::TooShort(1)));
        let ps = parse_plain_text(
            "\u{feff}<script>alert(1)</script> text\r\n\r\n#  T  \nword  two\nthree",
        )
        .unwrap();
        assert_eq!(
            ps[0].text, "<script>alert(1)</script> text",
            "kept verbatim; the UI renders text only"
        );
        assert_eq!(
            (ps[1].title.as_str(), ps[1].text.as_str()),
            ("T", "word two three")
        );
    }
}
