//! What a figure is, as data: lines, scatter panels, grouped bars or a histogram, with the CSV
//! of the numbers behind it. Serializable, so the worker can send figures to the page.

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("cannot draw the figure: {0}")]
pub struct FigureError(pub(super) String);

/// One named line or set of points.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One panel of a scatter figure: points and their least-squares line (a, b, r).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Panel {
    pub x_label: String,
    pub points: Vec<(f64, f64)>,
    pub fit: Option<(f64, f64, f64)>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Plot {
    /// Lines over shared axes; `diagonal` draws y = x (perfect calibration); `markers` dots;
    /// `joined: false` leaves the dots unjoined (a scatter of groups).
    Lines {
        series: Vec<Series>,
        x_label: String,
        y_label: String,
        x_range: (f64, f64),
        y_range: (f64, f64),
        diagonal: bool,
        markers: bool,
        joined: bool,
    },
    /// Side by side, one panel per predictor, y shared.
    Scatter { panels: Vec<Panel>, y_label: String },
    /// Grouped bars: one group per label, one bar per series (y ≥ 0).
    Bars {
        labels: Vec<String>,
        series: Vec<Series>,
        y_label: String,
    },
    /// Counts per bin [lo, hi) over x, with named vertical marks (a participant, a model).
    Histogram {
        bins: Vec<(f64, f64, u32)>,
        marks: Vec<(String, f64)>,
        x_label: String,
    },
}

/// A figure: a stable id (file names), a title, what to draw and the CSV behind it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub plot: Plot,
    pub csv: String,
}
