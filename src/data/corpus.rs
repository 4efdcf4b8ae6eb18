//! A corpus to compute predictors over: a CSV/TSV with an item id and its text (columns
//! `item`, `item_id`, `text_id` or `id`, and `text`), or a folder of `.txt` files, each file's
//! name without `.txt` its id. Items keep the file's order (a folder's: by name). An id given
//! twice with the same text is one item (a norms file repeats its passage on every row); with
//! another text, or an empty one, the file is refused with the line.

use std::collections::BTreeMap;

use super::DataError;
use super::delimited::{cell, read_table};

/// One text of a corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusItem {
    pub item: String,
    pub text: String,
}

/// Names the item id column may have, in the order they are looked for.
const ID_COLUMNS: [&str; 4] = ["item", "item_id", "text_id", "id"];

/// The items of a delimited corpus file (comma or tab, sniffed).
///
/// ```
/// use clozelab::data::corpus::read_corpus_table;
/// let items = read_corpus_table("c.tsv", "id\ttext\na\tThe dog barked.\nb\tIt slept.\na\tThe dog barked.\n").unwrap();
/// assert_eq!(items.len(), 2);
/// assert_eq!(items[1].text, "It slept.");
/// assert!(read_corpus_table("c.tsv", "id\ttext\na\tOne.\na\tTwo.\n").is_err());
/// ```
pub fn read_corpus_table(file: &str, text: &str) -> Result<Vec<CorpusItem>, DataError> {
    let (columns, records) = read_table(file, text)?;
    let id_column = ID_COLUMNS
        .iter()
        .find_map(|name| columns.find(file, name).ok())
        .ok_or_else(|| DataError::MissingColumn {
            file: file.into(),
            column: "item",
            found: columns.names.join(", "),
        })?;
    let text_column = columns.find(file, "text")?;
    let mut items: Vec<CorpusItem> = Vec::new();
    let mut seen: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for record in &records {
        let at = |message: String| DataError::At {
            file: file.into(),
            line: record.0,
            column: 1,
            message,
        };
        let item = cell(file, record, id_column)?.to_string();
        let body = cell(file, record, text_column)?.to_string();
        check_id(&item).map_err(at)?;
        if body.split_whitespace().next().is_none() {
            return Err(at(format!("item {item:?} has no text")));
        }
        match seen.get(&item) {
            Some(&(index, line)) if items[index].text != body => {
                return Err(at(format!(
                    "item {item:?} has another text than on line {line}"
                )));
            }
            Some(_) => {}
            None => {
                seen.insert(item.clone(), (items.len(), record.0));
                items.push(CorpusItem { item, text: body });
            }
        }
    }
    if items.is_empty() {
        return Err(DataError::Invalid {
            file: file.into(),
            message: "the corpus has no items".into(),
        });
    }
    Ok(items)
}

/// The items of a folder's `.txt` files (`(file name, contents)`), sorted by name.
pub fn corpus_from_texts(
    folder: &str,
    mut files: Vec<(String, String)>,
) -> Result<Vec<CorpusItem>, DataError> {
    files.sort();
    let mut items = Vec::new();
    for (name, text) in files {
        let Some(item) = name.strip_suffix(".txt") else {
            continue;
        };
        let invalid = |message: String| DataError::Invalid {
            file: format!("{folder}/{name}"),
            message,
        };
        check_id(item).map_err(invalid)?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        if text.split_whitespace().next().is_none() {
            return Err(invalid("the file has no text".into()));
        }
        items.push(CorpusItem {
            item: item.to_string(),
            text: text.to_string(),
        });
    }
    if items.is_empty() {
        return Err(DataError::Invalid {
            file: folder.into(),
            message: "the folder holds no .txt file".into(),
        });
    }
    Ok(items)
}

/// An id a table row and a file name can carry: not empty, no control characters.
fn check_id(item: &str) -> Result<(), String> {
    if item.is_empty() {
        return Err("an item has an empty id".into());
    }
    if item.chars().any(char::is_control) {
        return Err(format!("item id {item:?} holds a control character"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_and_folders_read_their_items_in_order_and_refuse_bad_ones() {
        let items = read_corpus_table(
            "c.csv",
            "\u{feff}Text_ID,Text\n2,\"Two, quoted\"\n1,One text\n",
        )
        .unwrap();
        assert_eq!(
            items.iter().map(|i| i.item.as_str()).collect::<Vec<_>>(),
            ["2", "1"]
        );
        assert_eq!(items[0].text, "Two, quoted");
        for (bad, says) in [
            ("item,text\n,Text\n", "empty id"),
            ("item,text\na,   \n", "no text"),
            ("item,text\na,x\na,y\n", "another text than on line 2"),
            ("name,text\na,x\n", "missing column"),
            ("item,words\na,x\n", "missing column"),
            ("item,text\n", "no items"),
            ("item,text\n\"a\u{7}\",x\n", "control character"),
            ("item,text\na,\"x\n", "quote never closed"),
        ] {
            let err = read_corpus_table("c.csv", bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad:?}: {err}");
        }
        let folder = corpus_from_texts(
            "f",
            vec![
                ("b.txt".into(), "Bee".into()),
                ("a.txt".into(), "\u{feff}Ay text".into()),
                ("notes.md".into(), "ignored".into()),
            ],
        )
        .unwrap();
        assert_eq!(folder[0].item, "a");
        assert_eq!(folder[0].text, "Ay text");
        assert!(corpus_from_texts("f", vec![("a.txt".into(), " \n".into())]).is_err());
        assert!(corpus_from_texts("f", vec![]).is_err());
    }
}
