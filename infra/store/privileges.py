"""Least privilege, enforced: the service refuses to run in production on a
PostgreSQL role that could change the log (rules.md 5).

The service's own role may only insert into and read the log's tables; the owner
(CASINO_DATABASE_OWNER_URL) builds the schema and grants it that much
(infra/store/schema.py: grant_service_role). Run as a superuser, as the schema's
owner, or as a member of the owner's role, the service holds what an insider needs
to rewrite the log behind its own back, and nothing would show it. So production
refuses to start then, in one line naming the role and why; as it does when the
role may UPDATE or DELETE a table of the log, or when a table of the log has lost
its guard (the triggers that refuse UPDATE, DELETE and TRUNCATE).
"""

from __future__ import annotations

from infra.store.database import PostgresDatabase
from infra.store.schema import LOG_TABLES
from projections.base import Cursor

# The triggers schema.py puts on every table of the log, and must be enabled.
GUARDS = ("refuse_change", "refuse_truncate")


def refusals(database: PostgresDatabase) -> list[str]:
    """Why the role `database` connects as must not run the service; empty when it may."""
    with database.read() as cursor:
        cursor.execute(
            "SELECT current_user::text, r.rolsuper, n.nspowner::regrole::text,"
            " pg_has_role(current_user, n.nspowner, 'MEMBER')"
            " FROM pg_roles r, pg_namespace n WHERE r.rolname = current_user AND n.nspname = ?",
            (database.schema,),
        )
        row = cursor.fetchone()
        if row is None:
            return [f"schema {database.schema} is not there"]
        role, superuser, owner, member = row
        found = _role_refusals(str(role), bool(superuser), str(owner), bool(member))
        found = [text.replace("{schema}", database.schema) for text in found]
        for table in LOG_TABLES:
            found += _table_refusals(cursor, str(role), database.schema, table)
    return found


def _role_refusals(role: str, superuser: bool, owner: str, member: bool) -> list[str]:
    if superuser:
        return [f"role {role} is a superuser: it can alter the log and switch off its guards"]
    if role == owner:
        return [f"role {role} owns schema {{schema}}: it can switch off the log's guards"]
    if member:
        return [f"role {role} is a member of {owner}, the schema's owner: it can act as the owner"]
    return []


def _table_refusals(cursor: Cursor, role: str, schema: str, table: str) -> list[str]:
    qualified = f"{schema}.{table}"
    cursor.execute(
        "SELECT has_table_privilege(current_user, ?, 'UPDATE'),"
        " has_table_privilege(current_user, ?, 'DELETE'),"
        " (SELECT count(*) FROM pg_trigger t WHERE t.tgrelid = ?::regclass"
        "  AND t.tgenabled IN ('O', 'A') AND t.tgname = ANY(?))",
        (qualified, qualified, qualified, [f"{table}_{guard}" for guard in GUARDS]),
    )
    row = cursor.fetchone()
    assert row is not None
    update, delete, guards = row
    found = []
    if update or delete:
        found.append(f"role {role} may UPDATE or DELETE {table}: grant it only INSERT and SELECT")
    if int(guards) < len(GUARDS):
        found.append(f"{table} has lost a guard: its triggers refusing changes are off or gone")
    return found
