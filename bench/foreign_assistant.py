"""A venue finder written apart from the built-in assistant, to measure the searches on a
system they were not tuned on (issue 40).

It is the kind of assistant a team writes first: keywords for the kind of place, a regular
expression for the rating, the first matching category wins, and a request nothing satisfies
is relaxed silently, dropping wishes from the last named. It shares nothing with
``usecases/navi`` but the venue list (``stellar export-data navi venues.json``) and the
answer format of the HTTP adapter (``{"answer": ..., "pois": [...]}``).

    stellar export-data navi /tmp/venues.json
    .venv/bin/python bench/foreign_assistant.py /tmp/venues.json --port 8765 &
    stellar compare navi --sut http://127.0.0.1:8765/query \\
        --algorithms surrogate,random,mode-balanced --seeds 10 --tests 200 --out /tmp/foreign
"""

from __future__ import annotations

import argparse
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CATEGORIES = {  # checked in this order: the first kind whose word appears wins
    "restaurant": ("restaurant", "eat", "food", "dinner", "lunch", "meal", "hungry"),
    "cafe": ("cafe", "café", "coffee", "latte", "espresso", "cappuccino"),
    "bar": ("bar", "beer", "drink", "pub", "cocktail", "wine"),
    "supermarket": ("supermarket", "groceries", "grocery", "shopping"),
    "bakery": ("bakery", "bread", "pastry", "croissant", "cake"),
    "hotel": ("hotel", "sleep", "room", "stay", "motel"),
    "car_repair": ("repair", "mechanic", "garage", "tire", "tyre", "broke down"),
    "hospital": ("hospital", "doctor", "injured", "emergency", "hurt"),
    "museum": ("museum", "exhibition", "gallery", "history"),
}
CUISINES = ("italian", "german", "turkish", "chinese", "vietnamese", "french", "american",
            "indian", "japanese", "thai", "greek", "middle eastern", "mexican")  # fmt: skip
PRICES = {"low": ("cheap", "budget", "inexpensive", "affordable"),
          "high": ("expensive", "fancy", "upscale", "luxury"),
          "medium": ("moderate", "mid-range", "reasonable")}  # fmt: skip
PAYMENTS = {"cash": ("cash",), "credit card": ("card",), "contactless": ("contactless",)}
RATING = re.compile(r"(\d(?:\.\d)?)\s*(?:\+|stars?|or (?:more|higher|better))")


def understand(text: str) -> dict:
    """The wishes found by keyword: category, cuisine, price, payment, parking, rating."""
    low = text.lower()

    def has(word: str) -> bool:
        return re.search(rf"\b{re.escape(word)}\b", low) is not None

    request: dict = {}
    request["category"] = next(
        (c for c, words in CATEGORIES.items() if any(has(w) for w in words)), None
    )
    request["cuisine"] = next((c for c in CUISINES if has(c)), None)
    request["price"] = next((p for p, words in PRICES.items() if any(has(w) for w in words)), None)
    request["payment"] = next(
        (p for p, words in PAYMENTS.items() if any(has(w) for w in words)), None
    )
    request["parking"] = True if has("parking") or has("park") else None
    match = RATING.search(low)
    request["rating"] = float(match.group(1)) if match else None
    return request


def search(venues: list[dict], request: dict) -> list[dict]:
    """Venues of the category meeting every wish, the best rated first; when none do, the
    wishes are dropped from the last (rating, parking, payment, price, cuisine) until some
    do, and the answer does not say so."""
    tests = {
        "cuisine": lambda v, x: v["cuisine"] == x,
        "price": lambda v, x: v["price"] == x,
        "payment": lambda v, x: x in v["payment"],
        "parking": lambda v, x: bool(v["parking"]),
        "rating": lambda v, x: (v["rating"] or 0) >= x,
    }
    wishes = [(k, request[k]) for k in tests if request.get(k) is not None]
    of_kind = [v for v in venues if v["category"] == request["category"]]
    while True:
        found = [v for v in of_kind if all(tests[k](v, x) for k, x in wishes)]
        if found or not wishes:
            return sorted(found, key=lambda v: -(v["rating"] or 0))[:5]
        wishes.pop()


def answer(venues: list[dict], text: str) -> dict:
    request = understand(text)
    if request["category"] is None:
        return {"answer": "Sorry, I didn't get what you are looking for. Could you rephrase?",
                "pois": []}  # fmt: skip
    found = search(venues, request)
    if not found:
        return {"answer": "I could not find anything like that nearby.", "pois": []}
    best = found[0]
    return {
        "answer": f"I found {len(found)} places. The best is {best['name']}, rated "
        f"{best['rating']}. Shall I start the navigation?",
        "pois": found,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("venues", type=Path, help="stellar export-data navi VENUES.json")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    venues = json.loads(args.venues.read_text())

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = json.dumps(answer(venues, body["text"])).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:  # quiet
            pass

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
