//! The index schema: one document per skill.

use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::{Index, Score, TantivyDocument};

use super::{Hit, SEARCHED_FIELDS, SearchDoc, Status, text_of};

/// Stemmed English text, lowercased, split on anything that is not alphanumeric (so
/// `pdf-tools` and `pdf_tools` index as `pdf`, `tool`).
const TEXT_TOKENIZER: &str = "en_stem";

#[derive(Clone, Copy)]
pub struct Fields {
    pub key: Field,
    pub namespace: Field,
    pub namespace_text: Field,
    pub name: Field,
    pub name_text: Field,
    pub description: Field,
    pub body: Field,
    pub paths: Field,
    pub uri: Field,
    pub version: Field,
    pub status: Field,
    pub deprecation: Field,
    /// The fields a query searches, with their boosts (`SEARCHED_FIELDS`).
    pub searched: [(Field, Score); SEARCHED_FIELDS.len()],
}

pub fn build() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = |stored: bool| {
        let opts = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TEXT_TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        if stored { opts.set_stored() } else { opts }
    };
    let mut fields = Fields {
        key: b.add_text_field("key", STRING),
        // FAST: visibility filters read each candidate's namespace from the column.
        namespace: b.add_text_field("namespace", STRING | STORED | FAST),
        namespace_text: b.add_text_field("namespace_text", text(false)),
        name: b.add_text_field("name", STRING | STORED),
        name_text: b.add_text_field("name_text", text(false)),
        description: b.add_text_field("description", text(true)),
        body: b.add_text_field("body", text(false)),
        paths: b.add_text_field("paths", text(false)),
        uri: b.add_text_field("uri", STORED),
        version: b.add_text_field("version", STORED),
        status: b.add_u64_field("status", INDEXED | STORED | FAST),
        deprecation: b.add_text_field("deprecation", STORED),
        // Filled in from the built schema below.
        searched: [(Field::from_field_id(0), 0.0); SEARCHED_FIELDS.len()],
    };
    let schema = b.build();
    fields.searched = SEARCHED_FIELDS.map(|(name, boost)| {
        let field = schema
            .get_field(name)
            .unwrap_or_else(|_| panic!("SEARCHED_FIELDS names {name:?}, which the schema lacks"));
        (field, boost)
    });
    (schema, fields)
}

/// The tokenizers the schema names are tantivy built-ins; nothing to register yet.
pub fn register_tokenizers(_index: &Index) {}

impl Fields {
    pub fn document(&self, d: &SearchDoc) -> TantivyDocument {
        let mut doc = TantivyDocument::default();
        doc.add_text(self.key, format!("{}/{}", d.namespace, d.name));
        doc.add_text(self.namespace, &d.namespace);
        doc.add_text(self.namespace_text, &d.namespace);
        doc.add_text(self.name, &d.name);
        doc.add_text(self.name_text, &d.name);
        doc.add_text(self.description, &d.description);
        doc.add_text(self.body, &d.body);
        doc.add_text(self.paths, &d.paths);
        doc.add_text(self.uri, &d.uri);
        doc.add_text(self.version, &d.version);
        doc.add_u64(self.status, d.status as u64);
        if let Some(message) = &d.deprecation {
            doc.add_text(self.deprecation, message);
        }
        doc
    }

    pub fn hit(&self, doc: &TantivyDocument, score: f32) -> Hit {
        let status = match doc.get_first(self.status).and_then(|v| v.as_u64()) {
            Some(1) => Status::Deprecated,
            Some(2) => Status::Yanked,
            _ => Status::Active,
        };
        let deprecation = Some(text_of(doc, self.deprecation)).filter(|s| !s.is_empty());
        Hit {
            uri: text_of(doc, self.uri),
            namespace: text_of(doc, self.namespace),
            name: text_of(doc, self.name),
            version: text_of(doc, self.version),
            description: text_of(doc, self.description),
            score,
            status,
            deprecation,
        }
    }
}
