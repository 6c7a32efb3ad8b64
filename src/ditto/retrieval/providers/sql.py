"""``create_sql_search_provider``: database-native full-text search over an injected client (RET-6).

The application owns the connection; Ditto never opens, configures or closes it and
never creates tables or indexes. Two dialects:

* ``sqlite`` — an FTS5 table queried with ``MATCH`` and ranked by ``bm25()``, over a
  ``sqlite3.Connection`` (opened with ``check_same_thread=False``, because statements
  run in ``asyncio.to_thread``). A fired signal calls ``Connection.interrupt()``.
* ``postgres`` — ``to_tsvector``/``websearch_to_tsquery`` ranked by ``ts_rank_cd``,
  over a psycopg ``AsyncConnection`` or an async pool (anything with an async
  ``connection()`` context manager). A fired signal cancels the statement on the server.

Safety: table and column names come from :class:`SqlSearchOptions` only and must be
plain identifiers (``[A-Za-z_][A-Za-z0-9_]*``, optionally ``schema.name``); they are
validated at construction and double-quoted. Query text and filter values are always
bound parameters. The query text is reduced to its words and each word is quoted as
an FTS5 string, so user text can never be FTS5 syntax. ``filter`` keys must be declared
in ``filter_columns``; the shared filter language (see
:mod:`ditto.retrieval.engines.filters`) becomes a ``WHERE`` clause, anything else is
``RETRIEVAL_INVALID_INPUT``. Any driver error becomes ``RETRIEVAL_BACKEND_ERROR`` with a
fixed message: no SQL, table names or DSN reach the caller.

Candidates: ``id`` is the id column (``rowid`` by default on SQLite) as a string,
``content`` the content column, ``score`` higher-is-better (``-bm25()`` on SQLite,
``ts_rank_cd`` on PostgreSQL), ``source = {target, ref: "<table>:<id>"}`` (the record
locator) and ``metadata`` the declared ``metadata_columns``.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic import Field, ValidationError, field_validator, model_validator

from ...contracts import DittoModel, freeze_json
from ...errors import InvalidArgumentError, describe_validation_error
from .._results import trusted_candidate, trusted_output, trusted_source
from ..config import context_limit
from ..engines.filters import FilterCondition, parse_filter
from ..errors import BACKEND_ERROR, INVALID_INPUT, RetrievalError
from ..types import (
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
)
from .base import as_retrieval_error, await_with_signal, begin_search, check_signal, query_text, run_blocking

if TYPE_CHECKING:  # psycopg (extra ``ditto-agents[postgres]``) is the application's; never imported here at run time
    import psycopg
    import psycopg_pool

#: What the provider reads from: SQLite's connection, or a psycopg async connection or pool.
SqlClient: TypeAlias = "sqlite3.Connection | psycopg.AsyncConnection[Any] | psycopg_pool.AsyncConnectionPool[Any]"

__all__ = ["SqlClient", "SqlSearchOptions", "SqlSearchProvider", "create_sql_search_provider"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORDS = re.compile(r"[^\W_]+")


def _check_identifier(name: str, *, qualified: bool = False) -> str:
    parts = name.split(".") if qualified else [name]
    if len(parts) > 2 or not all(_IDENTIFIER.fullmatch(part) for part in parts):
        raise ValueError(f"{name!r} is not a plain SQL identifier")
    return name


def _quote(name: str) -> str:
    # Safe only because every name passed _check_identifier (no quotes inside).
    return ".".join(f'"{part}"' for part in name.split("."))


class SqlSearchOptions(DittoModel):
    """Where and how to search. Every name is an identifier, never user text."""

    dialect: Literal["sqlite", "postgres"]
    table: str
    content_column: str
    id_column: str | None = None
    text_columns: tuple[str, ...] = ()
    tsvector_column: str | None = None
    text_search_config: str = "english"
    metadata_columns: tuple[str, ...] = ()
    filter_columns: dict[str, str] = Field(default_factory=dict)
    match: Literal["any", "all"] = "any"

    @field_validator("table")
    @classmethod
    def _table(cls, value: str) -> str:
        return _check_identifier(value, qualified=True)

    @field_validator("content_column", "id_column", "tsvector_column")
    @classmethod
    def _column(cls, value: str | None) -> str | None:
        return None if value is None else _check_identifier(value)

    @field_validator("text_columns", "metadata_columns")
    @classmethod
    def _columns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_identifier(name) for name in value)

    @field_validator("filter_columns", mode="before")
    @classmethod
    def _filters(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):  # ["year", "lang"] means key == column
            value = {name: name for name in value}
        if isinstance(value, Mapping):
            for key, column in value.items():
                if not isinstance(key, str) or not key:
                    raise ValueError("filter keys must be non-empty strings")
                _check_identifier(column)
        return value

    @field_validator("text_search_config")
    @classmethod
    def _config(cls, value: str) -> str:
        return _check_identifier(value, qualified=True)

    @model_validator(mode="after")
    def _dialect_rules(self) -> SqlSearchOptions:
        if self.dialect == "postgres" and self.id_column is None:
            raise ValueError("the postgres dialect needs id_column (there is no rowid)")
        return self


class _Query:
    """A statement with named parameters, written once per dialect."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.params: dict[str, Any] = {}

    def bind(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f":{name}" if self.dialect == "sqlite" else f"%({name})s"


def _where_filter(query: _Query, column: str, condition: FilterCondition) -> str:
    op, value = condition.op, condition.value
    if op in ("gt", "gte", "lt", "lte"):
        symbol = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
        return f"{column} {symbol} {query.bind(value)}"
    if op == "eq":
        return f"{column} IS NULL" if value is None else f"{column} = {query.bind(value)}"
    if op == "ne":
        return f"{column} IS NOT NULL" if value is None else f"({column} IS NULL OR {column} <> {query.bind(value)})"
    values = [item for item in value if item is not None]
    has_null = len(values) != len(value)
    listed = f"{column} IN ({', '.join(query.bind(item) for item in values)})" if values else "1 = 0"
    if op == "in":
        return f"({listed} OR {column} IS NULL)" if has_null else listed
    if has_null:  # nin with NULL among the values: the field must be present and not listed
        return f"({column} IS NOT NULL AND NOT {listed})"
    return f"({column} IS NULL OR NOT {listed})"


class SqlSearchProvider:
    """A ``RetrievalSearchProvider`` over an application-owned SQLite or PostgreSQL client."""

    def __init__(self, client: SqlClient, options: SqlSearchOptions) -> None:
        self._client: Any = client  # narrowed by dialect at run time (sqlite3 vs psycopg)
        self._options = options
        self._lock = threading.Lock()  # one statement at a time on a shared sqlite3 connection
        self._select_columns = [options.content_column, *options.metadata_columns]

    @property
    def options(self) -> SqlSearchOptions:
        return self._options

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> RetrievalSearchOutput:
        request, signal = begin_search(input, context)
        text = query_text(request, "SQL full-text search")
        conditions = parse_filter(request.filter) if request.filter else ()
        columns = self._filter_columns(conditions)
        limit = context_limit(request, context)
        words = _WORDS.findall(text)
        if not words:
            return self._output(request, [])
        if self._options.dialect == "sqlite":
            sql, params = self._sqlite_statement(words, conditions, columns, limit)
            rows = await self._run_sqlite(sql, params, signal)
        else:
            sql, params = self._postgres_statement(text, words, conditions, columns, limit)
            rows = await await_with_signal(self._run_postgres(sql, params), signal)
        return self._output(request, rows)

    # -- statements -------------------------------------------------------------
    def _filter_columns(self, conditions: Sequence[FilterCondition]) -> list[str]:
        declared = self._options.filter_columns
        columns = []
        for condition in conditions:
            column = declared.get(condition.field)
            if column is None:
                raise RetrievalError(INVALID_INPUT, f"filter field {condition.field!r} is not filterable here")
            columns.append(_quote(column))
        return columns

    def _sqlite_statement(self, words: list[str], conditions: Sequence[FilterCondition], columns: list[str],
                          limit: int) -> tuple[str, dict[str, Any]]:
        options = self._options
        query = _Query("sqlite")
        table = _quote(options.table)
        hidden = _quote(options.table.split(".")[-1])  # FTS5's hidden column has the bare table name
        joiner = " OR " if options.match == "any" else " AND "
        match = joiner.join('"' + word.replace('"', '""') + '"' for word in words)
        id_expression = _quote(options.id_column) if options.id_column else "rowid"
        selected = ", ".join(_quote(column) for column in self._select_columns)
        clauses = [f"{hidden} MATCH {query.bind(match)}"]
        clauses += [_where_filter(query, column, c) for column, c in zip(columns, conditions, strict=True)]
        sql = (f"SELECT {id_expression}, {selected}, bm25({hidden}) AS ditto_rank FROM {table} "
               f"WHERE {' AND '.join(clauses)} ORDER BY ditto_rank, rowid LIMIT {query.bind(limit)}")
        return sql, query.params

    def _postgres_statement(self, text: str, words: list[str], conditions: Sequence[FilterCondition],
                            columns: list[str], limit: int) -> tuple[str, dict[str, Any]]:
        options = self._options
        query = _Query("postgres")
        config = query.bind(options.text_search_config)
        if options.tsvector_column is not None:
            document = _quote(options.tsvector_column)
        else:
            sources = options.text_columns or (options.content_column,)
            joined = ", ".join(f"{_quote(column)}::text" for column in sources)
            document = f"to_tsvector({config}::regconfig, concat_ws(' ', {joined}))"
        # "any": the words OR-ed (websearch syntax "a or b"); "all": the user's text as a web search.
        search_text = " or ".join(words) if options.match == "any" else text
        tsquery = f"websearch_to_tsquery({config}::regconfig, {query.bind(search_text)})"
        identifier = _quote(options.id_column or "")
        selected = ", ".join(_quote(column) for column in self._select_columns)
        clauses = [f"{document} @@ ditto_query"]
        clauses += [_where_filter(query, column, c) for column, c in zip(columns, conditions, strict=True)]
        sql = (f"SELECT {identifier}, {selected}, ts_rank_cd({document}, ditto_query) AS ditto_rank "
               f"FROM {_quote(options.table)}, {tsquery} AS ditto_query WHERE {' AND '.join(clauses)} "
               f"ORDER BY ditto_rank DESC, {identifier} LIMIT {query.bind(limit)}")
        return sql, query.params

    # -- execution ----------------------------------------------------------------
    async def _run_sqlite(self, sql: str, params: dict[str, Any], signal: Any) -> list[tuple[Any, ...]]:
        connection = self._client
        state = {"running": False}

        def interrupt() -> None:
            if state["running"]:
                connection.interrupt()

        def execute() -> list[tuple[Any, ...]]:
            with self._lock:
                check_signal(signal)
                state["running"] = True
                try:
                    rows = connection.execute(sql, params).fetchall()
                except sqlite3.ProgrammingError as error:
                    if "thread" in str(error):
                        raise RetrievalError(BACKEND_ERROR, "The sqlite3 connection must be opened with "
                                                            "check_same_thread=False") from None
                    raise
                finally:
                    state["running"] = False
                return [(-row[-1], *row[:-1]) for row in rows]

        return await run_blocking(execute, signal, interrupt)

    async def _run_postgres(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        client = self._client
        try:
            if callable(getattr(client, "execute", None)):
                return await _postgres_rows(client, sql, params)
            async with client.connection() as connection:
                return await _postgres_rows(connection, sql, params)
        except Exception as error:
            raise as_retrieval_error(error) from None

    def _output(self, request: RetrievalSearchInput, rows: list[tuple[Any, ...]]) -> RetrievalSearchOutput:
        options = self._options
        target = request.target.name
        locator = options.table
        metadata_columns = options.metadata_columns
        candidates = []
        for score, identifier, content, *extra in rows:
            key = str(identifier)
            metadata = freeze_json(dict(zip(metadata_columns, extra, strict=True))) if metadata_columns else None
            candidates.append(trusted_candidate(key, content, float(score), trusted_source(target, f"{locator}:{key}"),
                                                metadata))
        return trusted_output(tuple(candidates), request.target, request.strategy)


async def _postgres_rows(connection: Any, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    # A transaction (a savepoint inside the application's own) keeps the connection usable after errors.
    async with connection.transaction(), connection.cursor() as cursor:
        await cursor.execute(sql, params)
        rows = await cursor.fetchall()
    return [(row[-1], *row[:-1]) for row in rows]


def create_sql_search_provider(client: SqlClient, options: SqlSearchOptions | Mapping[str, Any]) -> SqlSearchProvider:
    """Full-text search over ``client`` (``sqlite3.Connection`` or psycopg async connection/pool).

    ``options`` is a :class:`SqlSearchOptions` or a dict of its fields; invalid names or
    options raise :class:`~ditto.errors.InvalidArgumentError` (a ``ValueError``) at
    construction, before any statement exists::

        connection = sqlite3.connect("kb.sqlite", check_same_thread=False)
        provider = create_sql_search_provider(connection, {"dialect": "sqlite", "table": "docs",
                                                           "content_column": "body"})
    """
    if client is None:
        raise InvalidArgumentError("create_sql_search_provider needs the application's database client")
    try:
        resolved = options if isinstance(options, SqlSearchOptions) else SqlSearchOptions.model_validate(options)
    except ValidationError as error:
        raise InvalidArgumentError(f"invalid SQL search options: {describe_validation_error(error, root='options')}"
                                   ) from None
    if resolved.dialect == "sqlite" and not isinstance(client, sqlite3.Connection):
        raise InvalidArgumentError("the sqlite dialect needs a sqlite3.Connection")
    if resolved.dialect == "postgres" and not (callable(getattr(client, "execute", None))
                                               or callable(getattr(client, "connection", None))):
        raise InvalidArgumentError("the postgres dialect needs a psycopg AsyncConnection or an async pool")
    return SqlSearchProvider(client, resolved)


