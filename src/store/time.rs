//! How the store reads and writes a [`Timestamp`]: both engines keep times as text
//! (`2026-11-30T12:00:00.000Z`, see `core::time`), so a time column decodes as text and parses.
//! A stored time that does not parse fails the row's decoding (a `storage_error`, logged with
//! the column), never a made-up value. A time bound as a parameter is written in the stored
//! form, with milliseconds, so that it compares with the columns as text.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Database, Decode, Encode, Type};

use crate::core::time::Timestamp;

impl<DB: Database> Type<DB> for Timestamp
where
    str: Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <str as Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <str as Type<DB>>::compatible(ty)
    }
}

impl<'r, DB: Database> Decode<'r, DB> for Timestamp
where
    &'r str: Decode<'r, DB>,
{
    fn decode(value: DB::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Timestamp::parse(<&str as Decode<DB>>::decode(value)?)?)
    }
}

impl<'q, DB: Database> Encode<'q, DB> for Timestamp
where
    String: Encode<'q, DB>,
{
    fn encode_by_ref(&self, buf: &mut DB::ArgumentBuffer) -> Result<IsNull, BoxDynError> {
        self.with_millis().to_string().encode(buf)
    }
}
