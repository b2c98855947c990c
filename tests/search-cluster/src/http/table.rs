//! `_cat` tables rendered like ES's `RestTable`: column selection (`h`), sorting (`s`), byte units
//! (`bytes`), text with optional header (`v`) or JSON (`format=json`).

use std::cmp::Ordering;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::errors::ApiError;
use super::json::{Ordered, reply};
use super::params::Params;
use crate::units::{bytes_in_unit, format_bytes};
use crate::world::glob_match;

/// A column: name, the short aliases `h=`/`s=` accept, and whether text is right-aligned
/// (RestTable pads numbers on the left, everything else on the right).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub right: bool,
}

/// A left-aligned column.
pub(crate) const fn text(name: &'static str, aliases: &'static [&'static str]) -> Column {
    Column {
        name,
        aliases,
        right: false,
    }
}

/// A right-aligned column.
pub(crate) const fn number(name: &'static str, aliases: &'static [&'static str]) -> Column {
    Column {
        name,
        aliases,
        right: true,
    }
}

/// Concatenates column lists at compile time.
pub(crate) const fn concat<const N: usize>(parts: &[&[Column]]) -> [Column; N] {
    let mut out = [text("", &[]); N];
    let (mut part, mut filled) = (0, 0);
    while part < parts.len() {
        let mut position = 0;
        while position < parts[part].len() {
            out[filled] = parts[part][position];
            filled += 1;
            position += 1;
        }
        part += 1;
    }
    out
}

/// A typed cell: sorting compares values, not their text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Text(String),
    Number(u64),
    Bytes(u64),
    /// Shown as an empty string in text and `null` in JSON.
    Null,
}

impl Cell {
    fn display(&self, bytes_unit: Option<&str>) -> Option<String> {
        match self {
            Cell::Text(text) => Some(text.clone()),
            Cell::Number(number) => Some(number.to_string()),
            Cell::Bytes(bytes) => Some(
                match bytes_unit.and_then(|unit| bytes_in_unit(*bytes, unit)) {
                    Some(value) => value.to_string(),
                    None => format_bytes(*bytes),
                },
            ),
            Cell::Null => None,
        }
    }

    fn compare(&self, other: &Cell) -> Ordering {
        match (self, other) {
            (Cell::Number(a) | Cell::Bytes(a), Cell::Number(b) | Cell::Bytes(b)) => a.cmp(b),
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            (Cell::Null, Cell::Null) => Ordering::Equal,
            (Cell::Null, _) => Ordering::Greater,
            (_, Cell::Null) => Ordering::Less,
            (a, b) => a.display(None).cmp(&b.display(None)),
        }
    }
}

/// Rows of cells under fixed columns.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub columns: &'static [Column],
    pub rows: Vec<Vec<Cell>>,
}

/// Finds a column by name or alias.
fn lookup(columns: &[Column], wanted: &str) -> Option<usize> {
    columns
        .iter()
        .position(|column| column.name == wanted || column.aliases.contains(&wanted))
}

/// The columns to show with their headers: `h=` entries may be names, aliases (displayed as
/// asked, like ES does) or `*` patterns over names.
fn displayed(columns: &[Column], params: &Params) -> Vec<(usize, String)> {
    let Some(wanted) = params.get("h") else {
        return columns
            .iter()
            .enumerate()
            .map(|(position, column)| (position, column.name.to_owned()))
            .collect();
    };
    let mut shown = Vec::new();
    for entry in wanted
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
    {
        if entry.contains('*') {
            shown.extend(
                columns
                    .iter()
                    .enumerate()
                    .filter(|(_, column)| glob_match(entry, column.name))
                    .map(|(position, column)| (position, column.name.to_owned())),
            );
        } else if let Some(position) = lookup(columns, entry) {
            shown.push((position, entry.to_owned()));
        }
    }
    shown
}

/// `s=col[:asc|:desc],...`, applied as a stable multi-key sort.
fn sort_rows(table: &mut Table, params: &Params) -> Result<(), ApiError> {
    let Some(spec) = params.get("s") else {
        return Ok(());
    };
    let mut keys = Vec::new();
    for entry in spec
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
    {
        let (name, descending) = match entry.rsplit_once(':') {
            Some((name, "desc")) => (name, true),
            Some((name, "asc")) => (name, false),
            _ => (entry, false),
        };
        let position = lookup(table.columns, name).ok_or_else(|| {
            ApiError::illegal_argument(format!("Unable to sort by unknown sort key `{name}`"))
        })?;
        keys.push((position, descending));
    }
    table.rows.sort_by(|a, b| {
        keys.iter()
            .map(|&(position, descending)| {
                let order = a[position].compare(&b[position]);
                if descending { order.reverse() } else { order }
            })
            .find(|order| order.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    Ok(())
}

/// Renders the table as the client asked.
pub(crate) fn render(mut table: Table, params: &Params) -> Result<Response, ApiError> {
    let bytes_unit = params.get("bytes");
    if let Some(unit) = bytes_unit.filter(|unit| bytes_in_unit(0, unit).is_none()) {
        return Err(ApiError::illegal_argument(format!(
            "failed to parse [bytes] with value [{unit}]"
        )));
    }
    sort_rows(&mut table, params)?;
    let shown = displayed(table.columns, params);
    let cells: Vec<Vec<Option<String>>> = table
        .rows
        .iter()
        .map(|row| {
            shown
                .iter()
                .map(|(position, _)| row[*position].display(bytes_unit))
                .collect()
        })
        .collect();
    match params.get("format") {
        Some("json") => {
            let objects: Vec<Ordered<Option<String>>> = cells
                .into_iter()
                .map(|row| {
                    Ordered(
                        shown
                            .iter()
                            .map(|(_, header)| header.clone())
                            .zip(row)
                            .collect(),
                    )
                })
                .collect();
            Ok(reply(StatusCode::OK, &objects, params.pretty()))
        }
        None | Some("text" | "txt") => {
            let alignment: Vec<bool> = shown
                .iter()
                .map(|(position, _)| table.columns[*position].right)
                .collect();
            let header = params.flag("v")?.then(|| {
                shown
                    .iter()
                    .map(|(_, header)| Some(header.clone()))
                    .collect()
            });
            Ok(text_response(layout(&alignment, header, &cells)))
        }
        Some(other) => Err(ApiError::illegal_argument(format!(
            "simulator supports format=json and text only, not [{other}]"
        ))),
    }
}

/// RestTable layout: every cell padded to its column's width, one space between columns,
/// the last column not padded unless right-aligned.
fn layout(
    right: &[bool],
    header: Option<Vec<Option<String>>>,
    rows: &[Vec<Option<String>>],
) -> String {
    let all: Vec<&Vec<Option<String>>> = header.iter().chain(rows.iter()).collect();
    let widths: Vec<usize> = (0..right.len())
        .map(|column| {
            all.iter()
                .map(|row| {
                    row[column]
                        .as_deref()
                        .map_or(0, |cell| cell.chars().count())
                })
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in all {
        let mut cells = Vec::with_capacity(right.len());
        for (column, cell) in row.iter().enumerate() {
            let cell = cell.as_deref().unwrap_or("");
            let pad = " ".repeat(widths[column] - cell.chars().count());
            let last = column + 1 == right.len();
            cells.push(match (right[column], last) {
                (true, _) => format!("{pad}{cell}"),
                (false, true) => cell.to_owned(),
                (false, false) => format!("{cell}{pad}"),
            });
        }
        out.push_str(&cells.join(" "));
        out.push('\n');
    }
    out
}

fn text_response(body: String) -> Response {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=UTF-8"),
        )],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLUMNS: &[Column] = &[
        text("ip", &["i"]),
        number("heap.percent", &["hp"]),
        number("cpu", &[]),
        text("master", &["m"]),
        text("name", &["n"]),
    ];

    fn sample() -> Table {
        let row = |ip: &str, heap, cpu, master: &str| {
            vec![
                Cell::Text(ip.into()),
                Cell::Number(heap),
                Cell::Number(cpu),
                Cell::Text(master.into()),
                Cell::Text(ip.into()),
            ]
        };
        Table {
            columns: COLUMNS,
            rows: vec![
                row("192.0.2.12", 35, 5, "-"),
                row("192.0.2.11", 41, 12, "*"),
            ],
        }
    }

    fn body(response: Response) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let bytes = runtime
            .block_on(axum::body::to_bytes(response.into_body(), 1 << 20))
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn pads_like_rest_table() {
        let text = body(render(sample(), &Params::parse("v&s=ip")).unwrap());
        assert_eq!(
            text,
            "ip         heap.percent cpu master name\n\
             192.0.2.11           41  12 *      192.0.2.11\n\
             192.0.2.12           35   5 -      192.0.2.12\n"
        );
    }

    #[test]
    fn selects_by_alias_and_sorts_descending() {
        let text = body(render(sample(), &Params::parse("h=n,hp&s=cpu:desc&v")).unwrap());
        assert_eq!(text, "n          hp\n192.0.2.11 41\n192.0.2.12 35\n");
        assert!(render(sample(), &Params::parse("s=nope")).is_err());
    }

    #[test]
    fn json_values_are_strings_or_null() {
        let mut table = sample();
        table.rows[0][2] = Cell::Null;
        let json: serde_json::Value = serde_json::from_str(&body(
            render(table, &Params::parse("format=json&h=ip,cpu")).unwrap(),
        ))
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!([{"ip": "192.0.2.12", "cpu": null}, {"ip": "192.0.2.11", "cpu": "12"}])
        );
    }

    #[test]
    fn bytes_follow_the_requested_unit() {
        const SIZE: &[Column] = &[number("store.size", &["ss"])];
        let table = Table {
            columns: SIZE,
            rows: vec![vec![Cell::Bytes(3 * 1024 * 1024 + 5)]],
        };
        assert_eq!(
            body(render(table.clone(), &Params::default()).unwrap()),
            "3mb\n"
        );
        assert_eq!(
            body(render(table.clone(), &Params::parse("bytes=kb")).unwrap()),
            "3072\n"
        );
        assert!(render(table, &Params::parse("bytes=xb")).is_err());
    }
}
