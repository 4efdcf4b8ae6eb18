//! The papers' figures as data, each with the CSV of the numbers behind it ([`plot`]), drawn by
//! plotters on any backend ([`render`]): a canvas in the page, SVG for downloads and for
//! `clozelab figures`. One file per kind of figure: [`density`] (Figure 2), [`calibration`]
//! (reliability diagrams, interpretation curves), [`per_context`] (Figure 1, Appendix B),
//! [`histograms`], the production probes' [`variability`], and how precise the norms are so
//! far ([`norming`]).

pub mod calibration;
pub mod density;
pub mod histograms;
pub mod norming;
pub mod per_context;
pub mod plot;
pub mod render;
pub mod variability;

pub use calibration::{Target, interpretation_curves, reliability};
pub use density::{token_level_density, tvd_density};
pub use histograms::{participant_histogram, share_histograms};
pub use per_context::{context_bars, predictors};
pub use plot::{Figure, FigureError, Panel, Plot, Series};

use super::metrics::EceConvention;
use super::table1::{PerContext, Row, is_reference_system};
use crate::data::write_delimited;

fn csv(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    write_delimited(header, rows, crate::data::Delimiter::Comma)
}

fn systems(per_context: &[PerContext]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in per_context {
        if !names.contains(&p.system) {
            names.push(p.system.clone());
        }
    }
    names
}

/// Every dataset-wide figure: density, the three reliability diagrams, both interpretation
/// curves, and the predictors of each system.
pub fn all(rows: &[Row], per_context: &[PerContext], convention: EceConvention) -> Vec<Figure> {
    let mut out: Vec<Figure> = tvd_density(rows, per_context).into_iter().collect();
    out.extend(
        Target::ALL
            .iter()
            .filter_map(|t| reliability(per_context, *t, convention)),
    );
    out.extend(interpretation_curves(rows, false));
    out.extend(interpretation_curves(rows, true));
    for name in systems(per_context) {
        if !is_reference_system(&name) {
            out.extend(predictors(per_context, &name));
        }
    }
    out
}
