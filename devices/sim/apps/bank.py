"""The bank app: accounts, their transactions, saved payees and payments; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import number, string
from devices.sim.apps.common import DATE, matches, now_iso, out, outs, require
from devices.sim.apps.crud import list_tool
from devices.sim.apps.records import record_screens
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, Conflict, NotFound, tool

__all__ = ["LABEL", "ROOT", "SCREENS"]

# A single payment above this needs the bank's own approval flow (not simulated).
MAX_PAYMENT = 10_000.0


def _money(value: float) -> float:
    return round(value, 2)


list_tool("bank.list_accounts", "List my bank accounts with their balances.", "Account records.", "accounts")


@tool("bank.get_balance", "The balance of one account.", "{'account_id', 'balance', 'currency'}.",
      {"account_id": string("Account id.", minLength=1)})
def get_balance(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "bank", "accounts", args["account_id"], "account")
    return {"account_id": row["id"], "balance": row["balance"], "currency": row["currency"]}


@tool("bank.list_transactions", "List transactions, newest first, optionally of one account, "
      "matching a text or within dates.", "Transaction records.",
      optional={"account_id": string("Account id.", minLength=1),
                "query": string("Text in the description or counterparty.", minLength=1),
                "since": string("First date (YYYY-MM-DD).", pattern=DATE),
                "until": string("Last date (YYYY-MM-DD).", pattern=DATE)})
def list_transactions(state: SimState, args: dict[str, Any]) -> Any:
    rows = [r for r in state.table("bank", "transactions").values()
            if args.get("account_id", r["account_id"]) == r["account_id"]
            and ("query" not in args or matches(args["query"], r["description"], r["counterparty"]))
            and args.get("since", "0000") <= r["date"] <= args.get("until", "9999")]
    return [_public(r) for r in sorted(rows, key=lambda r: (r["date"], r["id"]), reverse=True)]


@tool("bank.get_transaction", "Get one transaction by id.", "The transaction record.",
      {"id": string("Transaction id.", minLength=1)})
def get_transaction(state: SimState, args: dict[str, Any]) -> Any:
    return _public(require(state, "bank", "transactions", args["id"], "transaction"))


def _public(row: dict[str, Any]) -> dict[str, Any]:
    """A transaction as the tools return it: the bank's reference shows only on screen."""
    return {k: v for k, v in out(row).items() if k != "reference"}


@tool("bank.list_payees", "List saved payees, optionally matching a name.", "Payee records.",
      optional={"query": string("Text in the payee's name.", minLength=1)})
def list_payees(state: SimState, args: dict[str, Any]) -> Any:
    return outs(r for r in state.table("bank", "payees").values()
                if "query" not in args or matches(args["query"], r["name"]))


@tool("bank.add_payee", "Save a new payee.", "The payee record.",
      {"name": string("Payee name.", minLength=1), "iban": string("IBAN.", pattern=r"[A-Z]{2}\d{2}[A-Z0-9]{8,30}")})
def add_payee(state: SimState, args: dict[str, Any]) -> Any:
    if any(r["iban"] == args["iban"] for r in state.table("bank", "payees").values()):
        raise Conflict("A payee with that IBAN is already saved.")
    row = {"id": state.new_id("bank", "payees"), "name": args["name"], "iban": args["iban"]}
    return out(state.put("bank", "payees", row))


def _debit(state: SimState, account_id: str, amount: float) -> dict[str, Any]:
    account = require(state, "bank", "accounts", account_id, "account")
    if amount <= 0 or amount > MAX_PAYMENT:
        raise BadArguments(f"Argument 'amount' must be above 0 and at most {MAX_PAYMENT:.0f}.")
    if account["balance"] < amount:
        raise Conflict(f"Account '{account_id}' holds only {account['balance']:.2f}.")
    return state.update("bank", "accounts", account_id, {"balance": _money(account["balance"] - amount)})


@tool("bank.transfer", "Move money between two of my accounts.", "The payment record.",
      {"from_account": string("Account id to take the money from.", minLength=1),
       "to_account": string("Account id to put it in.", minLength=1),
       "amount": number("Amount.", minimum=0.01)},
      {"memo": string("Reference text.")})
def transfer(state: SimState, args: dict[str, Any]) -> Any:
    if args["from_account"] == args["to_account"]:
        raise BadArguments("Pick two different accounts.")
    target = require(state, "bank", "accounts", args["to_account"], "account")
    _debit(state, args["from_account"], args["amount"])
    state.update("bank", "accounts", target["id"], {"balance": _money(target["balance"] + args["amount"])})
    row = {"id": state.new_id("bank", "payments"), "from_account": args["from_account"],
           "to": args["to_account"], "amount": _money(args["amount"]), "memo": args.get("memo", ""),
           "date": now_iso(state)[:10]}
    return out(state.put("bank", "payments", row))


@tool("bank.pay", "Pay a saved payee from one of my accounts.", "The payment record.",
      {"payee_id": string("Payee id.", minLength=1), "from_account": string("Account id.", minLength=1),
       "amount": number("Amount.", minimum=0.01)},
      {"memo": string("Reference text.")})
def pay(state: SimState, args: dict[str, Any]) -> Any:
    payee = state.get("bank", "payees", args["payee_id"])
    if payee is None:
        raise NotFound(f"There is no payee with id '{args['payee_id']}'.")
    _debit(state, args["from_account"], args["amount"])
    row = {"id": state.new_id("bank", "payments"), "from_account": args["from_account"],
           "to": payee["id"], "amount": _money(args["amount"]), "memo": args.get("memo", ""),
           "date": now_iso(state)[:10]}
    return out(state.put("bank", "payments", row))


list_tool("bank.list_payments", "List payments and transfers I made.", "Payment records.", "payments")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["bank"]
ROOT = "list"


def _tx_lines(row: dict[str, Any]) -> list[tuple[str, Any, str]]:
    return [("Date", row["date"], "date"), ("Amount", f"{row['amount']:.2f}", "amount"),
            ("Counterparty", row["counterparty"], "counterparty"), ("Category", row["category"], "category"),
            ("Reference", row.get("reference", ""), "reference")]


_ACCOUNTS = record_screens(
    "bank", "accounts", "Accounts", row_title=lambda r: r["name"],
    row_subtitle=lambda r: f"{r['balance']:.2f} {r['currency']}",
    lines=lambda r: [("Number", r["number"], "number"), ("Balance", f"{r['balance']:.2f}", "balance")],
    extra=lambda b, state, r: b.button("Transactions", "transactions",
                                       lambda g, i=r["id"]: g.open("transactions", account=i)),
    what="account")
_TX = record_screens(
    "bank", "transactions", "Transactions", row_title=lambda r: r["description"],
    row_subtitle=lambda r: f"{r['date']} · {r['amount']:.2f}", lines=_tx_lines,
    search=("description", "counterparty"), what="transaction")


def _transactions(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    from devices.sim.apps.ui import list_screen

    account = frame["params"].get("account")
    rows = sorted((r for r in state.table("bank", "transactions").values()
                   if account in (None, r["account_id"])), key=lambda r: r["date"], reverse=True)
    items = [(r["description"], f"{r['date']} · {r['amount']:.2f}",
              lambda g, i=r["id"]: g.open("transaction", id=i), None, None, None) for r in rows]
    list_screen(b, frame, "Transactions", items, up=True)


SCREENS = {"list": _ACCOUNTS["list"], "detail": _ACCOUNTS["detail"], "transactions": _transactions,
           "transaction": _TX["detail"]}
