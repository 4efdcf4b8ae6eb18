//! Drawing a [`Figure`] with plotters on any backend: a canvas in the page, SVG for downloads
//! and for `clozelab figures`.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::plot::{Figure, FigureError, Plot};

const PALETTE: [RGBColor; 8] = [
    RGBColor(200, 90, 40),
    RGBColor(70, 110, 190),
    RGBColor(60, 150, 80),
    RGBColor(150, 80, 170),
    RGBColor(200, 160, 30),
    RGBColor(40, 160, 170),
    RGBColor(120, 120, 120),
    RGBColor(220, 60, 110),
];

fn err(e: impl std::fmt::Display) -> FigureError {
    FigureError(e.to_string())
}

impl Figure {
    /// The pixel size the figure is drawn at (on the page and in files).
    pub fn size(&self) -> (u32, u32) {
        match self.plot {
            Plot::Scatter { .. } => (1200, 380),
            _ => (900, 520),
        }
    }

    /// Draws the figure on `root` (its title included).
    pub fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), FigureError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(&self.title, ("sans-serif", 16)).map_err(err)?;
        match &self.plot {
            Plot::Lines {
                series,
                x_label,
                y_label,
                x_range,
                y_range,
                diagonal,
                markers,
                joined,
            } => {
                let mut chart = ChartBuilder::on(&root)
                    .margin(10)
                    .x_label_area_size(36)
                    .y_label_area_size(52)
                    .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)
                    .map_err(err)?;
                chart
                    .configure_mesh()
                    .light_line_style(WHITE)
                    .x_desc(x_label.as_str())
                    .y_desc(y_label.as_str())
                    .draw()
                    .map_err(err)?;
                if *diagonal {
                    chart
                        .draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], BLACK.mix(0.3)))
                        .map_err(err)?;
                }
                for (i, s) in series.iter().enumerate() {
                    let color = PALETTE[i % PALETTE.len()];
                    let shown = if *joined {
                        s.points.clone()
                    } else {
                        Vec::new()
                    };
                    chart
                        .draw_series(LineSeries::new(shown, color.stroke_width(2)))
                        .map_err(err)?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2))
                        });
                    if *markers {
                        chart
                            .draw_series(
                                s.points.iter().map(|p| Circle::new(*p, 3, color.filled())),
                            )
                            .map_err(err)?;
                    }
                }
                // Calibration lines climb to the upper right: the legend goes where they are not.
                let corner = if *diagonal {
                    SeriesLabelPosition::UpperLeft
                } else {
                    SeriesLabelPosition::UpperRight
                };
                chart
                    .configure_series_labels()
                    .position(corner)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK.mix(0.3))
                    .draw()
                    .map_err(err)?;
            }
            Plot::Scatter { panels, y_label } => {
                let areas = root.split_evenly((1, panels.len().max(1)));
                for (panel, area) in panels.iter().zip(&areas) {
                    let x_max = panel.points.iter().map(|p| p.0).fold(1e-9, f64::max);
                    let x_min = panel.points.iter().map(|p| p.0).fold(0.0, f64::min);
                    let mut chart = ChartBuilder::on(area)
                        .margin(8)
                        .x_label_area_size(36)
                        .y_label_area_size(44)
                        .build_cartesian_2d(x_min..x_max * 1.05, 0.0..1.0)
                        .map_err(err)?;
                    chart
                        .configure_mesh()
                        .light_line_style(WHITE)
                        .x_labels(4)
                        .x_desc(panel.x_label.as_str())
                        .y_desc(y_label.as_str())
                        .draw()
                        .map_err(err)?;
                    chart
                        .draw_series(
                            panel
                                .points
                                .iter()
                                .map(|p| Circle::new(*p, 2, PALETTE[1].mix(0.35).filled())),
                        )
                        .map_err(err)?;
                    if let Some((a, b, _)) = panel.fit {
                        let line = [(x_min, a + b * x_min), (x_max, a + b * x_max)];
                        chart
                            .draw_series(LineSeries::new(line, PALETTE[0].stroke_width(2)))
                            .map_err(err)?;
                    }
                }
            }
            Plot::Bars {
                labels,
                series,
                y_label,
            } => {
                let top = series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.1))
                    .fold(0.05, f64::max);
                let groups = labels.len().max(1);
                let mut chart = ChartBuilder::on(&root)
                    .margin(10)
                    .x_label_area_size(70)
                    .y_label_area_size(52)
                    .build_cartesian_2d(0.0..groups as f64, 0.0..top * 1.1)
                    .map_err(err)?;
                let names = labels.clone();
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .light_line_style(WHITE)
                    .x_labels(groups * 2 + 1)
                    .x_label_formatter(&|x| {
                        let i = x.floor() as usize;
                        if (x - x.floor() - 0.5).abs() < 0.01 {
                            names.get(i).cloned().unwrap_or_default()
                        } else {
                            String::new()
                        }
                    })
                    .x_label_style(if groups > 12 {
                        // Many groups (words): upright labels would overlap.
                        ("sans-serif", 11)
                            .into_font()
                            .transform(FontTransform::Rotate90)
                    } else {
                        ("sans-serif", 12).into_font()
                    })
                    .y_desc(y_label.as_str())
                    .draw()
                    .map_err(err)?;
                let width = 0.8 / series.len().max(1) as f64;
                for (k, s) in series.iter().enumerate() {
                    let color = PALETTE[k % PALETTE.len()];
                    chart
                        .draw_series(s.points.iter().map(|&(x, y)| {
                            let left = x + 0.1 + k as f64 * width;
                            Rectangle::new([(left, 0.0), (left + width, y)], color.filled())
                        }))
                        .map_err(err)?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            Rectangle::new([(x, y - 4), (x + 10, y + 4)], color.filled())
                        });
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK.mix(0.3))
                    .draw()
                    .map_err(err)?;
            }
            Plot::Histogram {
                bins,
                marks,
                x_label,
            } => draw_histogram(&root, bins, marks, x_label)?,
        }
        root.present().map_err(err)
    }

    /// The figure as an SVG document.
    pub fn to_svg(&self, width: u32, height: u32) -> Result<String, FigureError> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
            self.draw(&root)?;
        }
        Ok(out)
    }
}

fn draw_histogram<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    bins: &[(f64, f64, u32)],
    marks: &[(String, f64)],
    x_label: &str,
) -> Result<(), FigureError>
where
    DB::ErrorType: 'static,
{
    let top = f64::from(bins.iter().map(|b| b.2).max().unwrap_or(0).max(1));
    let x_min = bins.first().map_or(0.0, |b| b.0);
    let x_max = bins.last().map_or(1.0, |b| b.1);
    let mut chart = ChartBuilder::on(root)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(44)
        // A little room either side, so a mark at 0 or 1 is not hidden by an axis.
        .build_cartesian_2d(x_min - 0.02..x_max + 0.02, 0.0..top * 1.15)
        .map_err(err)?;
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .x_desc(x_label)
        .y_desc("participants")
        .draw()
        .map_err(err)?;
    chart
        .draw_series(bins.iter().map(|&(lo, hi, n)| {
            Rectangle::new(
                [(lo, 0.0), (hi, f64::from(n))],
                PALETTE[6].mix(0.5).filled(),
            )
        }))
        .map_err(err)?;
    // The first mark (the participant) in black, the next (the first model) in blue, as in
    // the token game's histogram; further models each in a colour of their own, never the bars'.
    const MODEL_COLORS: [usize; 7] = [1, 2, 3, 4, 5, 7, 0];
    for (i, (name, x)) in marks.iter().enumerate() {
        let color = match i {
            0 => BLACK,
            _ => PALETTE[MODEL_COLORS[(i - 1) % MODEL_COLORS.len()]],
        };
        chart
            .draw_series(LineSeries::new(
                [(*x, 0.0), (*x, top * 1.1)],
                color.stroke_width(3),
            ))
            .map_err(err)?
            .label(format!("{name}: {:.1} %", 100.0 * x))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(err)?;
    Ok(())
}
