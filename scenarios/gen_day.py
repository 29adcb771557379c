#!/usr/bin/env python3
"""Writes scenarios/day.json: Lena Hartmann's Monday, 2026-11-23, in Berlin (+01:00).

Deterministic (a fixed splitmix64 stream, no clock, no platform-dependent randomness) and
stdlib only: `python3 scenarios/gen_day.py` rewrites the same bytes every time.
What the day is meant to trigger, hour by hour, is in scenarios/README.md.

Bounds the agents impose that shape the data (read from their tick modules):
- finance keeps the 300 most recent context transactions and puts at most 100 in one proposal
  (the most recent). upcoming_bills sees only spends of merchants paid at least twice, so the
  history keeps repeat spends to about one a day: the monthly bills (3 occurrences since late
  August) stay inside those 100 all day. One-off merchants (restaurants, shops, once each)
  carry the rest of the spending.
- comms scans the first 600 body characters and calls a message new for 2 hours.
- wellness stress: HRV drop 10..50 %, resting-HR rise 2..12 bpm, sleep shortfall 30..210 min,
  weights 50/30/20; high from 60.
"""

import json
import os
import re
import sys
from datetime import date, datetime, timedelta, timezone

# finance's tick: most transactions in one proposal (tick.rs PROPOSAL_TRANSACTIONS_MAX).
PROPOSAL_TRANSACTIONS_MAX = 100
# Room left in that selection for edits to the day before the oldest bill payment drops out.
BILLS_MARGIN = 5

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "day.json")

DAY = date(2026, 11, 23)  # a Monday
CET = timezone(timedelta(hours=1))
CEST = timezone(timedelta(hours=2))
# Central European Summer Time ended on Sunday 2026-10-25 at 03:00 local.
CEST_END_UTC = datetime(2026, 10, 25, 1, 0, tzinfo=timezone.utc)
HISTORY_START = date(2026, 8, 21)  # three months of card history before the day

ME = "lena.hartmann@halden-systems.de"
MARKUS = "Markus Vogel <markus.vogel@halden-systems.de>"
JONAS = "Jonas Richter <jonas.richter@gmx.de>"
CLAIRE = "Claire Dubois <claire.dubois@lumenpay.eu>"
KITA = "Kita Sonnenblume <leitung@kita-sonnenblume-berlin.de>"
PRIYA = "Priya Natarajan <priya.natarajan@halden-systems.de>"
SOFIA = "Sofia Brandt <sofia.brandt@halden-systems.de>"
LENA = "Lena Hartmann <lena.hartmann@halden-systems.de>"
DAVID = "David Okafor <david.okafor@halden-systems.de>"
TIM = "Tim Schreiber <tim.schreiber@halden-systems.de>"
ANNA = "Anna Keller <anna.keller@halden-systems.de>"


class Rng:
    """splitmix64: the same stream on every Python and platform."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n

    def chance(self, percent):
        return self.below(100) < percent

    def between(self, lo, hi):
        return lo + self.below(hi - lo + 1)

    def pick(self, items):
        return items[self.below(len(items))]


def local(d, hh, mm, ss=0):
    """An RFC 3339 time for the local wall clock in Berlin (CEST before 25 Oct, else CET)."""
    naive = datetime(d.year, d.month, d.day, hh, mm, ss)
    guess = naive.replace(tzinfo=CEST)
    tz = CEST if guess < CEST_END_UTC else CET
    return naive.replace(tzinfo=tz).isoformat()


def today(hh, mm, d=DAY):
    return local(d, hh, mm)


def at(spec, d=DAY):
    """'HH:MM' on the day (or on d)."""
    hh, mm = spec.split(":")
    return today(int(hh), int(mm), d)


# ---------------------------------------------------------------------------------------------
# Profile
# ---------------------------------------------------------------------------------------------

def profile(budgets):
    return {
        "me": ME,
        "vip_senders": [
            "markus.vogel@halden-systems.de",
            "jonas.richter@gmx.de",
            "claire.dubois@lumenpay.eu",
            "leitung@kita-sonnenblume-berlin.de",
        ],
        "quiet_hours": {"start": "22:00", "end": "07:00"},
        "working_hours": {"start": "09:00", "end": "17:30", "weekdays": [1, 2, 3, 4, 5]},
        "break_after_meetings": True,
        "baselines": {"hrv_ms": 58, "resting_hr_bpm": 57, "sleep_minutes": 450},
        "budgets": budgets,
    }


# ---------------------------------------------------------------------------------------------
# Transactions
# ---------------------------------------------------------------------------------------------

# Merchants seen again and again (their spends feed upcoming_bills' series search).
COFFEE = ("SumUp *Cafe Liebling", 5814)
LUNCH_REGULAR = ("Restaurant Chen Che", 5812)
GROCERS = [
    ("REWE Markt Kastanienallee", 5411),
    ("Lidl Berlin-Prenzlauer Berg", 5411),
    ("ALDI Nord Schoenhauser Allee", 5411),
    ("Bio Company Prenzlauer Berg", 5411),
]
DELIVERY = [("Deliveroo", 5812), ("Uber Eats", 5814)]
AMAZON = ("Amazon.de", 5999)
DM = ("dm-drogerie markt", 5912)
UBER = ("Uber *Trip", 4121)

# Bills: (merchant, mcc, day of month, amounts per month Aug..Nov, direct debit?)
# Direct debits move to the next business day; card subscriptions charge on the day.
MONTHLY = [
    ("Berliner Wohnbau eG Miete", 6513, 1, 114500, True),
    ("BVG Deutschlandticket Abo", 4111, 1, 6300, False),
    ("Urban Sports Club", 7997, 1, 5900, False),
    ("Spotify P2A7C1", 4899, 3, 1099, False),
    ("Vattenfall Europe Sales GmbH", 4900, 15, 7800, True),
    ("NETFLIX.COM", 4899, 24, 1399, False),
    ("Vodafone GmbH Mobilfunk", 4814, 26, 3999, True),
    # iCloud+ renews on the 23rd: due this morning, charged at 09:14 (see DAY_TRANSACTIONS).
    ("APPLE.COM/BILL", 5818, 23, 299, False),
]
VODAFONE_OCT_MINOR = 4187  # roaming in Vienna in October: 4.7 % above the plan, same bill
HELLOFRESH = ("HelloFresh SE", 5499)  # weekly meal box, charged every Thursday

# One-off merchants: each used at most once (so they never form a series).
ONE_OFF_DINING = [
    "Restaurant Katz Orange", "Restaurant Lode und Stijn", "Restaurant Sasaya",
    "Restaurant Kanaan", "Restaurant Lucky Leek", "Restaurant Hako Ramen", "Restaurant Mogg",
    "Restaurant Maria Bonita", "Restaurant Chutnify", "Restaurant Tisk", "Restaurant Nolle",
    "Restaurant Umami Prenzlauer Berg", "Restaurant Fes Turkish BBQ", "Restaurant Dae Mon",
    "Restaurant Pastis Wilmersdorf", "Restaurant Schwarzwaldstuben", "Restaurant Mabuhay",
    "Restaurant La Bodega", "Restaurant Zur Letzten Instanz", "Restaurant Cocolo Ramen",
    "Restaurant Transit Mitte", "Restaurant Ixthys", "Restaurant Khwan",
    "Cafe Fleury", "Cafe Anna Blume", "Cafe Kreuzzwei", "Cafe Bravo", "Cafe Pförtner",
    "Cafe Sankt Oberholz", "Cafe Westberlin", "Cafe Frieda", "Cafe Matilda", "Cafe Oliv",
    "Cafe Neundrei", "Cafe The Barn Mitte", "Cafe Nano Kaffee", "Cafe Godshot",
    "Starbucks Hackescher Markt", "McDonald's Alexanderplatz",
]
ONE_OFF_OTHER = [
    ("Dussmann das KulturKaufhaus", 5942, 1400, 4200),
    ("Hugendubel Tauentzienstrasse", 5942, 1200, 3600),
    ("Bauhaus Prenzlauer Berg", 5200, 900, 6400),
    ("TK Maxx Alexanderplatz", 5651, 1900, 5900),
    ("Rossmann Schoenhauser Allee", 5912, 600, 2400),
    ("Depot Alexa", 5719, 900, 3900),
    ("Decathlon Mitte", 5941, 1500, 6900),
    ("Thalia Alexa", 5942, 1100, 2900),
    ("Flying Tiger Copenhagen", 5331, 500, 2200),
    ("Zeit fuer Brot Alte Schoenhauser", 5462, 450, 1300),
    ("Soluna Brot und Oel", 5462, 520, 1500),
    ("Prater Garten", 5813, 1800, 4200),
    ("Becketts Kopf", 5813, 2200, 5200),
    ("Pergamonmuseum Staatliche Museen", 7991, 1200, 2400),
    ("Volksbuehne Berlin", 7922, 2200, 4400),
    ("Stadtbad Oderberger Strasse", 7997, 650, 1300),
    ("Taxi Berlin 4421", 4121, 1400, 2900),
    ("Blumen Damaschke", 5992, 1800, 3900),
    ("Spielzeugladen Kleine Welt", 5945, 1200, 3900),
    ("Kino International", 7832, 1100, 2600),
    ("Apotheke am Kollwitzplatz", 5912, 690, 2390),
    ("Mueller Drogerie Alexa", 5912, 700, 2600),
    ("Pro QM Buchhandlung", 5942, 1600, 3900),
    ("IKEA Berlin-Lichtenberg", 5712, 2900, 8900),
    ("Kaufhaus des Westens", 5311, 2500, 8900),
    ("Zalando SE", 5691, 3995, 8995),
    ("Deutsche Bahn Fernverkehr", 4112, 2990, 7990),
    ("Shell Station Prenzlauer Allee", 5541, 450, 1200),
    ("Manufactum Warenhaus", 5399, 1900, 6900),
    ("Mauerpark Flohmarkt SumUp", 5931, 800, 2500),
    ("Markthalle Neun Haendler", 5499, 900, 2800),
    ("Berliner Baeder Betriebe", 7997, 400, 900),
    ("Jack Wolfskin Store Mitte", 5699, 4900, 9500),
    ("Kinderladen Zwergenstark", 5641, 1500, 4800),
    ("Bergmann Apotheke", 5912, 650, 1900),
    ("Sportscheck Alexanderplatz", 5941, 2500, 8800),
    ("Uniqlo Tauentzienstrasse", 5651, 1990, 7900),
    ("Lush Hackescher Markt", 5977, 900, 3200),
    ("Hornbach Berlin-Mahlsdorf", 5200, 1500, 7800),
    ("Cafe Einstein Stammhaus", 5812, 1800, 4800),
]


def business_day(d):
    while d.weekday() >= 5:
        d += timedelta(days=1)
    return d


def history(rng):
    """Card and account history from HISTORY_START to the day before."""
    txs = []

    def add(d, hh, mm, merchant, mcc, amount):
        txs.append({"d": d, "t": local(d, hh, mm), "merchant": merchant, "mcc": mcc,
                    "amount_minor": amount})

    dining = list(ONE_OFF_DINING)
    other = list(ONE_OFF_OTHER)

    def one_off_dining():
        return dining.pop(rng.below(len(dining))) if dining else None

    def one_off_other():
        return other.pop(rng.below(len(other))) if other else None

    amazon_days = [date(2026, 8, 29), date(2026, 9, 9), date(2026, 9, 22), date(2026, 10, 6),
                   date(2026, 10, 19), date(2026, 11, 3), date(2026, 11, 14)]
    amazon_amounts = [1299, 2499, 899, 3490, 1999, 4590, 1649]

    d = HISTORY_START
    while d < DAY:
        wd = d.weekday()  # 0 = Monday
        # Bills.
        for merchant, mcc, dom, amount, debit in MONTHLY:
            due = date(d.year, d.month, dom)
            if debit:
                due = business_day(due)
            if d == due and d >= HISTORY_START:
                if merchant.startswith("Vodafone") and d.month == 10:
                    amount = VODAFONE_OCT_MINOR
                add(d, 5 if debit else 3, rng.between(10, 50), merchant, mcc, amount)
        if wd == 3:  # Thursday
            add(d, 6, rng.between(0, 30), HELLOFRESH[0], HELLOFRESH[1],
                rng.pick([6499, 6499, 6499, 6799]))
        if d in amazon_days:
            add(d, rng.between(19, 22), rng.between(0, 59), AMAZON[0], AMAZON[1],
                amazon_amounts[amazon_days.index(d)])
        # Weekday routine: coffee after Kita drop-off, a lunch, sometimes.
        if wd < 5:
            if rng.chance(16):
                add(d, 8, rng.between(18, 40), COFFEE[0], COFFEE[1], rng.pick([390, 390, 420]))
            if rng.chance(9):
                add(d, 12, rng.between(10, 55), LUNCH_REGULAR[0], LUNCH_REGULAR[1],
                    rng.between(1090, 1390))
            elif rng.chance(24):
                name = one_off_dining()
                if name:
                    add(d, 12, rng.between(5, 59), name, 5812, rng.between(890, 1790))
        # Groceries: a big Saturday shop, and a top-up midweek.
        if wd == 5 and rng.chance(85):
            g = GROCERS[rng.below(2)]
            add(d, rng.between(9, 12), rng.between(0, 59), g[0], g[1], rng.between(5200, 9800))
        if wd in (1, 3) and rng.chance(33):
            g = GROCERS[2 + rng.below(2)]
            add(d, 18, rng.between(0, 55), g[0], g[1], rng.between(1400, 3900))
        # Weekends out, evening delivery, drugstore, rides, shops.
        if wd == 5 and rng.chance(55):
            name = one_off_dining()
            if name:
                add(d, 20, rng.between(0, 45), name, 5812, rng.between(4200, 8900))
        if wd == 6 and rng.chance(45):
            name = one_off_dining()
            if name:
                add(d, 11, rng.between(0, 45), name, 5814, rng.between(2400, 4600))
        if wd in (2, 4, 6) and rng.chance(13):
            m = DELIVERY[rng.below(2)]
            add(d, 19, rng.between(30, 59), m[0], m[1], rng.between(2200, 4100))
        if rng.chance(5):
            add(d, 17, rng.between(0, 59), DM[0], DM[1], rng.between(800, 3400))
        if rng.chance(3):
            add(d, rng.between(7, 23), rng.between(0, 59), UBER[0], UBER[1],
                rng.between(1150, 2450))
        if rng.chance(33):
            o = one_off_other()
            if o:
                add(d, rng.between(10, 18), rng.between(0, 59), o[0], o[1],
                    rng.between(o[2], o[3]))
        d += timedelta(days=1)

    # The Zalando return sent back on 11 Nov (refunded on the day, see DAY_TRANSACTIONS).
    add(date(2026, 11, 9), 21, 12, "Zalando SE", 5691, 5995)
    # Keep the ordering of a statement export: by time.
    txs.sort(key=lambda t: (datetime.fromisoformat(t["t"]), t["merchant"]))
    out = []
    for i, t in enumerate(txs):
        out.append({
            "id": "tx-%s-%03d" % (t["d"].strftime("%Y%m%d"), i),
            "merchant": t["merchant"],
            "mcc": "%04d" % t["mcc"],
            "amount_minor": t["amount_minor"],
            "currency": "EUR",
            "time": t["t"],
        })
    return out


# (local time, id, merchant, mcc, amount in cents)
DAY_TRANSACTIONS = [
    ("08:21", "tx-20261123-coffee", "SumUp *Cafe Liebling", 5814, 390),
    ("09:14", "tx-20261123-icloud", "APPLE.COM/BILL", 5818, 299),
    ("11:12", "tx-20261123-zalando-refund", "Zalando SE", 5691, -5995),
    ("13:27", "tx-20261123-einstein", "Cafe Einstein Unter den Linden", 5812, 6840),
    ("14:52", "tx-20261123-vending", "Selecta Automat Halden HQ", 5814, 250),
    ("17:12", "tx-20261123-apotheke", "Apotheke am Kollwitzplatz", 5912, 895),
    # A terminal retry at the supermarket: the same charge twice, two minutes apart.
    ("17:38", "tx-20261123-rewe-1", "REWE Markt Kastanienallee", 5411, 2347),
    ("17:40", "tx-20261123-rewe-2", "REWE Markt Kastanienallee", 5411, 2347),
    ("19:48", "tx-20261123-ubereats", "Uber Eats", 5814, 3460),
    # The espresso machine: far above anything ever spent at Amazon.de.
    ("20:41", "tx-20261123-amazon", "Amazon.de", 5999, 64900),
    ("21:03", "tx-20261123-spotify-family", "Spotify P2A7C1", 4899, 600),
]


# ---------------------------------------------------------------------------------------------
# Calendar
# ---------------------------------------------------------------------------------------------

def ev(eid, title, start, end, location=None, d=DAY):
    e = {"id": eid, "title": title, "start": at(start, d), "end": at(end, d)}
    if location:
        e["location"] = location
    return e


HQ_SPREE = "Halden HQ, Raum Spree 3.12"
HQ_HAVEL = "Halden HQ, Raum Havel 3.04"
HQ_ELBE = "Halden HQ, Raum Elbe 2.01"
KITA_ADDR = "Kita Sonnenblume, Kastanienallee 12"
TUE, WED, THU, FRI = (DAY + timedelta(days=i) for i in range(1, 5))
LAST_FRI = DAY - timedelta(days=3)

INITIAL_EVENTS = [
    # Last week, for context (over: they score low and are never in the way).
    ev("ev-retro-1120", "Sprint retro", "15:00", "16:00", HQ_SPREE, LAST_FRI),
    # Monday. Online calls carry no location (the calendar only compares physical places).
    ev("ev-kita-dropoff-1123", "Kita drop-off (Emil)", "07:45", "08:15", KITA_ADDR),
    ev("ev-standup-1123", "Payments squad stand-up", "09:00", "09:15"),
    # Overlap: the 1:1 starts 30 minutes before the review ends, in another room.
    ev("ev-roadmap-q4", "Q4 roadmap review", "09:30", "10:30", HQ_SPREE),
    ev("ev-1on1-markus-1123", "1:1 Markus / Lena", "10:00", "10:45", HQ_HAVEL),
    ev("ev-kestrel-checkin-1123", "Kestrel KYC integration check-in", "11:00", "11:30"),
    # Tight transition: lunch in Mitte ends 13:30, the sync at HQ starts 13:35.
    ev("ev-lunch-claire", "Lunch with Claire Dubois (LumenPay)", "12:30", "13:30",
       "Cafe Einstein, Unter den Linden 42"),
    ev("ev-arch-sync-1123", "Architecture sync: ledger migration", "13:35", "14:30", HQ_SPREE),
    # Double booking: the training lies inside the interview.
    ev("ev-interview-ortega", "Interview: Tomás Ortega (Senior Backend Engineer)", "15:00",
       "16:00", HQ_ELBE),
    ev("ev-security-training-q4", "Mandatory security awareness training", "15:15", "15:45"),
    ev("ev-sprint-prep-1123", "Sprint planning prep", "16:30", "17:00", HQ_HAVEL),
    ev("ev-pilates-1123", "Pilates", "18:30", "19:30", "Pilates Loft Mitte, Torstraße 140"),
    # The rest of the week.
    ev("ev-dentist-1124", "Dentist: Dr. Yilmaz (check-up)", "08:00", "08:40",
       "Zahnarztpraxis Dr. Yilmaz, Schönhauser Allee 58", TUE),
    ev("ev-standup-1124", "Payments squad stand-up", "09:00", "09:15", None, TUE),
    ev("ev-guild-1124", "Payments guild", "11:30", "12:30", HQ_SPREE, TUE),
    ev("ev-design-review-1124", "Design review: reconciliation UI", "14:00", "15:00", HQ_ELBE,
       TUE),
    ev("ev-standup-1125", "Payments squad stand-up", "09:00", "09:15", None, WED),
    ev("ev-sprint-planning-1125", "Sprint planning", "10:00", "11:30", HQ_SPREE, WED),
    ev("ev-lunch-learn-1125", "Lunch & learn: event sourcing pitfalls", "12:30", "13:30",
       HQ_ELBE, WED),
    ev("ev-standup-1126", "Payments squad stand-up", "09:00", "09:15", None, THU),
    ev("ev-1on1-priya-1126", "1:1 Priya / Lena", "16:00", "16:30", None, THU),
    ev("ev-standup-1127", "Payments squad stand-up", "09:00", "09:15", None, FRI),
    ev("ev-retro-1127", "Sprint retro", "15:00", "16:00", HQ_SPREE, FRI),
    ev("ev-laternenfest-1127", "Laternenfest Kita Sonnenblume", "16:30", "18:30", KITA_ADDR, FRI),
]

# (signal time, kind, data)
CALENDAR_SIGNALS = [
    # Markus opens an incident bridge after the overnight failure.
    ("07:21", "event", ev("ev-bridge-lumenpay", "LumenPay settlement incident bridge", "08:30",
                          "09:00")),
    # Kestrel moves today's check-in to Wednesday afternoon.
    ("10:41", "cancel_event", {"id": "ev-kestrel-checkin-1123"}),
    ("10:44", "event", ev("ev-kestrel-checkin-1125", "Kestrel KYC integration check-in",
                          "14:00", "14:30", None, WED)),
    # Lena takes the Kita pickup: a double booking with the sprint prep until she moves it.
    ("11:26", "event", ev("ev-kita-pickup-1123", "Pick up Emil from Kita", "16:30", "17:00",
                          KITA_ADDR)),
    ("13:18", "cancel_event", {"id": "ev-sprint-prep-1123"}),
    ("13:19", "event", ev("ev-sprint-prep-1124", "Sprint planning prep", "16:00", "16:30",
                          HQ_HAVEL, TUE)),
    # IT moves the training away from the interview.
    ("14:04", "cancel_event", {"id": "ev-security-training-q4"}),
    ("14:06", "event", ev("ev-security-training-q4-r", "Mandatory security awareness training",
                          "10:00", "10:30", None, FRI)),
]


# ---------------------------------------------------------------------------------------------
# Invitations and answers
# ---------------------------------------------------------------------------------------------

INVITATIONS = [
    ("09:18", {
        "id": "inv-golive-1124", "from": MARKUS, "title": "Ledger migration go/no-go",
        "start": at("10:00", TUE), "end": at("11:00", TUE), "location": HQ_SPREE,
        "attendees": ["markus.vogel@halden-systems.de", ME, "priya.natarajan@halden-systems.de",
                      "sofia.brandt@halden-systems.de", "anna.keller@halden-systems.de"],
    }),
    ("11:36", {
        "id": "inv-kestrel-demo-1123",
        "from": "Niklas Brenner <niklas.brenner@kestrel-kyc.com>",
        "title": "Kestrel KYC live demo: automated UBO checks",
        "start": at("16:00"), "end": at("16:45"),
        "attendees": ["niklas.brenner@kestrel-kyc.com", "amelie.roth@kestrel-kyc.com", ME],
    }),
    ("15:06", {
        "id": "inv-team-dinner-1126", "from": PRIYA, "title": "Q4 team dinner",
        "start": at("19:00", THU), "end": at("21:30", THU),
        "location": "Restaurant Katz Orange, Bergstraße 22",
        "attendees": ["priya.natarajan@halden-systems.de", ME, "sofia.brandt@halden-systems.de",
                      "david.okafor@halden-systems.de", "tim.schreiber@halden-systems.de"],
    }),
    # Arrives in quiet hours: the question is held, and nobody answers it tonight.
    ("22:16", {
        "id": "inv-lumenpay-qbr-1127", "from": CLAIRE,
        "title": "LumenPay x Halden quarterly business review",
        "start": at("14:00", FRI), "end": at("15:30", FRI),
        "location": "LumenPay Berlin, Schlesische Straße 26",
        "attendees": ["claire.dubois@lumenpay.eu", "markus.vogel@halden-systems.de", ME],
    }),
]


def answer(signal, confirm):
    return {"agent": "calendar", "tool": "schedule_event", "signal": signal, "confirm": confirm}


ANSWERS = [
    ("12:02", answer("invitation:inv-golive-1124", True)),
    ("14:12", answer("invitation:inv-kestrel-demo-1123", False)),
    # A second tap on the same "Decline" a few seconds later: matches nothing any more.
    ("14:12", answer("invitation:inv-kestrel-demo-1123", False)),
]


# ---------------------------------------------------------------------------------------------
# Wearable
# ---------------------------------------------------------------------------------------------

def sleep_history():
    """Seven nights before last night (plus one more), as the sleep tracker recorded them."""
    nights = [
        # (evening date, start, morning end); a split night has two sessions.
        (date(2026, 11, 14), "23:32", "07:48"),
        (date(2026, 11, 15), "23:20", "06:45"),
        (date(2026, 11, 16), "23:05", "06:31"),
        (date(2026, 11, 17), "23:41", "06:35"),
        (date(2026, 11, 18), "00:14", "03:09"),  # Emil woke up with a cough
        (date(2026, 11, 18), "03:36", "06:30"),
        (date(2026, 11, 19), "23:12", "06:40"),
        (date(2026, 11, 20), "00:46", "08:20"),  # Friday night out
        (date(2026, 11, 21), "23:55", "08:04"),
    ]
    sessions = []
    for evening, start, end in nights:
        sh, sm = map(int, start.split(":"))
        eh, em = map(int, end.split(":"))
        start_day = evening if sh >= 12 else evening + timedelta(days=1)
        sessions.append({"start": local(start_day, sh, sm),
                         "end": local(evening + timedelta(days=1), eh, em)})
    return sessions


LAST_NIGHT = {"start": local(DAY - timedelta(days=1), 23, 52), "end": local(DAY, 5, 44)}
LAST_NIGHT_MINUTES = 352  # 23:52 → 05:44

# (local time, hrv_ms, resting_hr_bpm): the watch's rolling values. Baselines 58 ms / 57 bpm.
# The afternoon strain: HRV falls to half the baseline and resting HR climbs 10 bpm by 15:00,
# after the incident, the escalation and the back-to-back afternoon.
READING_KEYS = [
    ("06:37", 49, 59), ("07:30", 47, 60), ("08:30", 43, 62), ("09:00", 44, 61),
    ("10:00", 41, 62), ("10:45", 43, 61), ("11:30", 46, 60), ("12:30", 48, 59),
    ("13:30", 44, 61), ("14:00", 38, 63), ("14:30", 31, 66), ("14:45", 29, 67),
    ("15:00", 27, 68), ("15:15", 28, 67), ("15:30", 31, 66), ("15:45", 35, 64),
    ("16:15", 40, 62), ("17:00", 45, 60), ("18:00", 49, 59), ("18:30", 0, 0),
    ("19:45", 50, 59), ("20:30", 53, 58), ("21:30", 55, 57), ("22:30", 52, 58),
    ("22:50", 45, 61), ("23:30", 49, 59),
]


def readings(rng):
    """A reading about every 15 minutes while the watch is worn (not during Pilates)."""
    keys = [(int(t[:2]) * 60 + int(t[3:]), h, r) for t, h, r in READING_KEYS]
    out = []
    minute = 6 * 60 + 37
    while minute <= 23 * 60 + 25:
        prev = max(k for k in keys if k[0] <= minute)
        nxt = min((k for k in keys if k[0] > minute), default=prev)
        if prev[1] == 0:  # Pilates: the watch is in the locker
            minute += 15
            continue
        exact = prev[0] == minute
        if nxt[1] == 0 or nxt is prev or exact:
            hrv, rhr = prev[1], prev[2]
        else:
            f = (minute - prev[0]) / (nxt[0] - prev[0])
            hrv = round(prev[1] + f * (nxt[1] - prev[1]))
            rhr = round(prev[2] + f * (nxt[2] - prev[2]))
        in_peak = 14 * 60 + 30 <= minute <= 15 * 60 + 45
        if not exact and not in_peak:
            hrv += rng.pick([-1, 0, 0, 1])
        data = {"hrv_ms": hrv, "resting_hr_bpm": rhr}
        if minute == 6 * 60 + 37:
            data["sleep_minutes"] = LAST_NIGHT_MINUTES
        out.append(("%02d:%02d" % divmod(minute, 60), data))
        # Peak readings land on the keyframes exactly; elsewhere a little jitter in timing.
        minute += 15 if in_peak else rng.pick([14, 15, 15, 16])
        if 14 * 60 + 30 <= minute <= 15 * 60 + 45:
            minute = 14 * 60 + 30 + ((minute - (14 * 60 + 30) + 14) // 15) * 15
    return out


# ---------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------

SIG_MARKUS = "\n\n-- \nMarkus Vogel\nVP Engineering, Halden Systems GmbH\nRosenthaler Str. 40, 10178 Berlin"
SIG_CLAIRE = "\n\n--\nClaire Dubois\nHead of Merchant Operations\nLumenPay SAS · 14 rue du Faubourg Poissonnière, 75010 Paris"
SIG_LENA = "\n\n-- \nLena Hartmann\nEngineering Manager, Payments\nHalden Systems GmbH"
SIG_SOFIA = "\n\n-- \nSofia Brandt\nSite Reliability Engineering"
SIG_PRIYA = "\n\n-- \nPriya Natarajan\nProduct Lead, Payments"


def quote(who, when, text):
    lines = "\n".join("> " + line for line in text.split("\n"))
    return "\n\nOn %s, %s wrote:\n%s" % (when, who, lines)


# (local time or (date, time), id, thread, sender, subject, body)
MESSAGES = [
    # --- Sunday evening and the night (before the first tick) ---
    ((DAY - timedelta(days=1), "21:58"), "m-1122-mama", "th-weihnachten", "Ute Hartmann <ute.hartmann@t-online.de>",
     "Weihnachten bei uns?",
     "Hallo Lena,\n\nPapa und ich wollten fragen, ob ihr Weihnachten zu uns nach Lübeck kommt. "
     "Emil könnte dann endlich den Schlitten ausprobieren. Sag Bescheid, wenn ihr wisst, wie "
     "lange Jonas frei hat.\n\nLiebe Grüße\nMama"),
    ((DAY - timedelta(days=1), "23:40"), "m-1122-linkedin", "th-linkedin-ortega", "LinkedIn <messages-noreply@linkedin.com>",
     "Tomás Ortega sent you a message",
     "Tomás Ortega: Hi Lena, looking forward to our conversation tomorrow at 15:00. Is there "
     "anything I should prepare for the system design part?\n\nView message\n\nYou are "
     "receiving notification emails. Unsubscribe · Help\nLinkedIn Ireland Unlimited Company"),
    ("02:13", "m-0213-aws", "th-aws-ledger-latency", "AWS Notifications <no-reply@sns.amazonaws.com>",
     "ALARM: \"ledger-prod-settlement-batch-errors\" in EU (Frankfurt)",
     "You are receiving this email because your Amazon CloudWatch Alarm "
     "\"ledger-prod-settlement-batch-errors\" in the EU (Frankfurt) region has entered the ALARM "
     "state, because \"Threshold Crossed: 1 datapoint [412.0 (23/11/26 01:12:00)] was greater "
     "than the threshold (10.0).\" at \"Monday 23 November, 2026 01:13:04 UTC\".\n\n"
     "Alarm Details:\n- Name: ledger-prod-settlement-batch-errors\n- Severity: critical\n"
     "- State Change: OK -> ALARM\n- Namespace: Halden/Ledger"),
    ("02:41", "m-0241-pagerduty", "th-pd-48213", "PagerDuty <no-reply@pagerduty.com>",
     "[#48213] Triggered: settlement-batch failed (ledger-prod)",
     "Incident #48213 triggered on service Ledger Production.\n\nSummary: settlement-batch "
     "failed for merchant group LUMENPAY (1,840 payouts not submitted)\nUrgency: high\n"
     "Assigned to: Sofia Brandt (primary on-call)\nEscalation policy: Payments critical\n\n"
     "Acknowledge: https://halden.pagerduty.com/incidents/Q3X8M2LJ48213"),
    ("03:02", "m-0302-sofia", "th-pd-48213", SOFIA,
     "Re: [#48213] settlement-batch failed",
     "Ack'd. The batch host rejects the bank's SFTP endpoint: TLS handshake fails, looks like "
     "our client certificate expired at 00:00 UTC. I can't rotate it without the HSM admin "
     "role. Escalating to Markus; will keep the payouts queued so nothing is lost." + SIG_SOFIA),
    ("05:31", "m-0531-checkpoint", "th-checkpoint", "Tagesspiegel Checkpoint <checkpoint@newsletter.tagesspiegel.de>",
     "Checkpoint: Schnee auf der A100, Streik bei der S-Bahn?",
     "Guten Morgen, liebe Leserinnen und Leser,\n\nheute Nacht hat es in Berlin zum ersten Mal "
     "geschneit. Die BVG meldet Verspätungen auf den Linien M1 und M10. Außerdem: Was der neue "
     "Haushalt für die Bezirke bedeutet, warum die Kitas im Bezirk Pankow Personal suchen, und "
     "wo es den besten Glühwein gibt.\n\nIhr Checkpoint-Team"),
    ("06:04", "m-0604-github", "th-gh-1432", "GitHub <notifications@github.com>",
     "[halden/ledger] ledger: idempotent retry for settlement batches (PR #1432)",
     "@sofia-brandt requested your review on: halden/ledger#1432 ledger: idempotent retry for "
     "settlement batches.\n\nRetries a failed settlement batch without re-submitting payouts the "
     "bank already accepted. Adds a dedup key per payout.\n\n-- \nReply to this email directly, "
     "view it on GitHub or unsubscribe."),
    # --- The morning: the incident ---
    ("06:44", "m-0644-markus-urgent", "th-lumenpay-incident", MARKUS,
     "URGENT: LumenPay settlement batch failed overnight",
     "Lena,\n\nthe 02:00 settlement batch for LumenPay failed and about 1,840 merchant payouts "
     "are stuck. Sofia thinks the bank client certificate expired. Claire's ops team will "
     "notice as soon as they log in. I've opened a bridge at 8:30 — please join as soon as "
     "possible and bring whatever you know about the retry path.\n\nMarkus" + SIG_MARKUS),
    ("07:03", "m-0703-lena-ack", "th-lumenpay-incident", LENA,
     "Re: URGENT: LumenPay settlement batch failed overnight",
     "On it. I'll join the bridge at 8:30 and pull the batch logs before that. Sofia, can you "
     "get the HSM admin to stand by?" + SIG_LENA +
     quote("Mon, 23 Nov 2026 at 06:44", MARKUS, "the 02:00 settlement batch for LumenPay failed...")),
    ("07:12", "m-0712-jonas-kita", "th-kita-pickup", JONAS,
     "Emil heute abholen?",
     "Hey, my train back from Hamburg got cancelled, the next one only gets me to Berlin at "
     "19:10. Could you pick up Emil from Kita today at 16:30? They close at 17:00 on Mondays. "
     "Let me know if that doesn't work, then I'll ask my mum.\n\nJ"),
    ("07:26", "m-0726-kita-laterne", "th-kita-laternenfest", KITA,
     "Elternbrief: Laternenfest am Freitag",
     "Liebe Eltern,\n\nam Freitag, 27.11., feiern wir ab 16:30 Uhr unser Laternenfest im "
     "Garten der Kita. Bitte gebt euren Kindern eine Laterne und warme Sachen mit. Für "
     "Punsch und Kekse freuen wir uns über Spenden in der Liste an der Garderobe.\n\n"
     "Herzliche Grüße\nSabine Krüger, Kitaleitung"),
    ("07:41", "m-0741-hausverwaltung", "th-heizung", "Hausverwaltung Krämer <service@hv-kraemer.de>",
     "Heizungswartung Kollwitzstraße 71: Thursday 26 November, 8:00–12:00",
     "Dear tenants,\n\nthe annual maintenance of the heating system and the radiator valves "
     "takes place on Thursday 26 November between 8:00 and 12:00. Please make sure the "
     "technician can access all radiators. If nobody can be at home, let us know by "
     "Wednesday so we can arrange a key handover.\n\nKind regards\nHausverwaltung Krämer GmbH"),
    ("07:55", "m-0755-sofia-cert", "th-lumenpay-incident", SOFIA,
     "Re: URGENT: LumenPay settlement batch failed overnight",
     "Confirmed: the client cert on batch-02 expired at 00:00 UTC. The renewal request from "
     "October never got signed. HSM admin (Tim) is on his way in, ETA 8:20. Once the new cert "
     "is loaded I can re-run the batch with the idempotent retry from #1432." + SIG_SOFIA),
    ("08:09", "m-0809-priya-deck", "th-roadmap-q4", PRIYA,
     "Roadmap review at 9:30: I'll present",
     "Morning! Given the incident, I'll drive the roadmap review and you jump in for the "
     "capacity part. Could you send me your three capacity scenarios before 9:15? The slides "
     "are in the shared folder (Q4 Roadmap v7)." + SIG_PRIYA),
    ("08:14", "m-0814-markus-summary", "th-lumenpay-incident", MARKUS,
     "Re: URGENT: LumenPay settlement batch failed overnight",
     "Claire will want a written summary today. Can you draft it by 1pm? Timeline, root "
     "cause, what we retry, what we change so it does not happen again. I'll review before it "
     "goes out.\n\nM." + SIG_MARKUS),
    ("08:38", "m-0838-claire-urgent", "th-claire-payouts", CLAIRE,
     "Payout delay: need an update ASAP",
     "Hi Lena,\n\nour merchant support queue is filling up with questions about missing "
     "payouts. Could you send us a written status as soon as possible, and a full incident "
     "summary by 2pm today? We need to decide by 3pm whether to notify all affected "
     "merchants.\n\nThanks,\nClaire" + SIG_CLAIRE),
    ("08:52", "m-0852-lena-claire", "th-claire-payouts", LENA,
     "Re: Payout delay: need an update ASAP",
     "Hi Claire,\n\nroot cause found: an expired client certificate on one of our batch hosts. "
     "The certificate is being replaced right now and the payouts are queued, none are lost. "
     "I will send the full incident summary by 2pm as promised.\n\nBest,\nLena" + SIG_LENA),
    ("09:07", "m-0907-sofia-retry", "th-lumenpay-incident", SOFIA,
     "Re: URGENT: LumenPay settlement batch failed overnight",
     "New cert loaded at 08:47, batch re-run finished at 09:04: 1,812 of 1,840 payouts "
     "accepted by the bank. 28 failed with IBAN validation errors. Can you decide whether we "
     "retry those manually today or leave them for tomorrow's batch?" + SIG_SOFIA),
    ("09:18", "m-0918-invite-golive", "th-invite-golive", "Markus Vogel (Google Calendar) <calendar-notification@google.com>",
     "Invitation: Ledger migration go/no-go @ Tue 24 Nov 2026 10:00 - 11:00 (CET)",
     "Markus Vogel has invited you to a meeting.\n\nLedger migration go/no-go\nWhen: Tuesday 24 "
     "Nov 2026 10:00 – 11:00 (Central European Time - Berlin)\nWhere: Halden HQ, Raum Spree "
     "3.12\nGuests: Markus Vogel, Lena Hartmann, Priya Natarajan, Sofia Brandt, Anna Keller\n\n"
     "Given this morning, I want a proper go/no-go before we move more merchants.\n\n"
     "Going? Yes - Maybe - No"),
    ("09:26", "m-0926-david-pr", "th-gh-1440", DAVID,
     "PR #1440: cert expiry alerting",
     "Hi Lena, I put up #1440: it alerts 30 days before any client certificate expires and "
     "pages at 7 days. Small change, but it touches the on-call runbook. Could you review it "
     "this week?\n\nDavid"),
    ("09:41", "m-0941-greenhouse", "th-greenhouse-ortega", "Greenhouse <no-reply@greenhouse.io>",
     "Interview today: Tomás Ortega, Senior Backend Engineer (15:00)",
     "Hi Lena,\n\nyou are interviewing Tomás Ortega today at 15:00 (System design, 60 min, "
     "Raum Elbe 2.01). His CV and the take-home review are attached to the candidate profile. "
     "Please submit your scorecard by EOD tomorrow so the hiring committee can meet on "
     "Wednesday.\n\nHalden Systems Recruiting"),
    ("09:58", "m-0958-finance-expenses", "th-expenses-oct", "Finance Team <finance@halden-systems.de>",
     "Reminder: October expense reports due Friday",
     "Hi all,\n\na friendly reminder that October expense reports are due by Friday 27 "
     "November, 12:00. Receipts older than 60 days can no longer be reimbursed. Questions? "
     "Reply to this email.\n\nThanks,\nFinance"),
    ("10:12", "m-1012-claire-ceo", "th-claire-payouts", CLAIRE,
     "Re: Payout delay: need an update ASAP",
     "Thanks Lena, that helps. Our CEO has asked for a call with your CTO. Can you set it up "
     "urgently, ideally before 5pm today? Also: 28 merchants are still without their payout "
     "according to our dashboard — is that expected?\n\nClaire" + SIG_CLAIRE +
     quote("Mon, 23 Nov 2026 at 08:52", LENA, "root cause found: an expired client certificate...")),
    ("10:31", "m-1031-it-password", "th-it-password", "IT Service Desk <it-servicedesk@halden-systems.de>",
     "Your Halden password expires in 3 days",
     "Hello Lena Hartmann,\n\nthe password of your account lhartmann expires in 3 days. "
     "Please change it at https://id.halden-systems.de before it expires to avoid being "
     "locked out of VPN and e-mail.\n\nIT Service Desk · ext. 4000"),
    ("10:38", "m-1038-kestrel-move", "th-kestrel", "Amelie Roth <amelie.roth@kestrel-kyc.com>",
     "Moving today's check-in",
     "Hi Lena,\n\napologies for the short notice, something came up on our side. Could we "
     "move today's 11:00 check-in to Wednesday at 14:00? I'll send an updated invite.\n\n"
     "Best regards,\nAmelie Roth\nCustomer Success, Kestrel KYC GmbH"),
    ("10:50", "m-1050-markus-cto", "th-claire-payouts", MARKUS,
     "Re: Payout delay: need an update ASAP",
     "I've talked to Anna, she will call LumenPay's CEO at 16:00 today. Please prepare a "
     "one-page brief for her by 3pm.\n\nM." + SIG_MARKUS),
    ("11:02", "m-1102-jonas-nudge", "th-kita-pickup", JONAS,
     "Re: Emil heute abholen?",
     "Did you see my message about Emil? Need to tell my mum by noon if she has to go."),
    ("11:21", "m-1121-lena-jonas", "th-kita-pickup", LENA,
     "Re: Emil heute abholen?",
     "Sorry, crazy morning. Yes, I'll pick him up at 16:30. Can you get groceries on the way "
     "home? We're out of milk and Emil's cough syrup is almost empty."),
    ("11:15", "m-1115-priya-followups", "th-roadmap-q4", PRIYA,
     "Roadmap review: follow-ups",
     "Thanks all. Action items from this morning: Lena to send the revised Q4 capacity "
     "numbers by Wednesday; Priya to update the roadmap deck by tomorrow noon; David to "
     "check the reconciliation estimates with finance. Shout if I missed anything." + SIG_PRIYA),
    ("11:36", "m-1136-invite-kestrel", "th-invite-kestrel", "Niklas Brenner <niklas.brenner@kestrel-kyc.com>",
     "Invitation: Kestrel KYC live demo: automated UBO checks (today 16:00)",
     "Hi Lena,\n\nAmelie mentioned you are evaluating beneficial-owner checks. We have a live "
     "demo slot today at 16:00 — 45 minutes, Zoom link in the invite. Would be great to see "
     "you there!\n\nNiklas Brenner\nAccount Executive DACH, Kestrel KYC GmbH"),
    ("11:48", "m-1148-sofia-iban", "th-lumenpay-incident", SOFIA,
     "Re: URGENT: LumenPay settlement batch failed overnight",
     "Manual retry of 24 of the 28 done. The other 4 have genuinely invalid IBANs (closed "
     "accounts). LumenPay needs to contact those merchants. Could you include that in the "
     "summary to Claire?" + SIG_SOFIA),
    ("12:04", "m-1204-lena-summary-draft", "th-lumenpay-incident", LENA,
     "Re: URGENT: LumenPay settlement batch failed overnight",
     "Draft of the incident summary is in the doc (Incidents/2026-11-23 LumenPay). Markus, "
     "please review before 1:30, I'll send it to Claire from lunch." + SIG_LENA),
    ("12:19", "m-1219-markus-review", "th-lumenpay-incident", MARKUS,
     "Re: URGENT: LumenPay settlement batch failed overnight",
     "Reviewed, two small comments in the doc. Good to go once addressed. Thanks for pulling "
     "this together so fast.\n\nM." + SIG_MARKUS),
    ("12:41", "m-1241-doctolib", "th-doctolib", "Doctolib <no-reply@doctolib.de>",
     "Reminder: your appointment tomorrow at 08:00",
     "Hello Lena Hartmann,\n\nthis is a reminder of your appointment tomorrow at 08:00 with "
     "Dr. med. dent. Aylin Yilmaz, Schönhauser Allee 58, 10437 Berlin. Please bring your "
     "health insurance card. To cancel, use the app at least 24 hours in advance."),
    ("13:02", "m-1302-david-question", "th-gh-1440", DAVID,
     "Re: PR #1440: cert expiry alerting",
     "One more question: should the 7-day page go to the payments rotation or to SRE? I'd say "
     "payments, since we own the bank connections."),
    ("13:31", "m-1331-n26-einstein", "th-n26", "N26 <no-reply@n26.com>",
     "Card payment of €68.40 at Cafe Einstein Unter den Linden",
     "You paid €68.40 at Cafe Einstein Unter den Linden with your Mastercard ending 4417. "
     "Your Dining space has now exceeded its monthly budget."),
    ("13:44", "m-1344-lena-claire-summary", "th-claire-payouts", LENA,
     "Incident summary: LumenPay settlement delay, 23 Nov 2026",
     "Hi Claire,\n\nattached is the full incident summary. In short: an expired client "
     "certificate blocked the 02:00 batch; 1,836 of 1,840 payouts have been settled since "
     "09:04. Four merchants have closed bank accounts and need to give you new IBANs. Anna "
     "will call your CEO at 16:00.\n\nBest,\nLena" + SIG_LENA),
    ("13:58", "m-1358-claire-thanks", "th-claire-payouts", CLAIRE,
     "Re: Incident summary: LumenPay settlement delay, 23 Nov 2026",
     "Thank you, this is what we needed. We will contact the four merchants today. Could you "
     "send me the list of their merchant IDs by 4pm?\n\nClaire" + SIG_CLAIRE),
    ("14:03", "m-1403-it-training", "th-security-training", "IT Security <security@halden-systems.de>",
     "Security awareness training moved to Friday 10:00",
     "Hi Lena,\n\nwe noticed the Q4 security awareness training clashed with your interview "
     "and moved you to the Friday session (27 Nov, 10:00–10:30). The training is mandatory "
     "and must be completed by 30 November.\n\nIT Security"),
    ("14:21", "m-1421-tim-hsm", "th-lumenpay-incident", TIM,
     "Re: URGENT: LumenPay settlement batch failed overnight",
     "FYI: I've renewed the other two batch certificates as well, they would have expired in "
     "December. Calendar reminders are set for next year." ),
    ("14:36", "m-1436-sofia-postmortem", "th-postmortem", SOFIA,
     "Postmortem for #48213",
     "I'll write the postmortem. Could you block 45 minutes on Thursday afternoon for the "
     "review? I've drafted the timeline already." + SIG_SOFIA),
    ("14:48", "m-1448-markus-board", "th-board-update", MARKUS,
     "Board update: include the incident?",
     "Do you think we need to mention this morning in Friday's board update? I'd keep it to "
     "two sentences. Let me know what you think by Thursday.\n\nM." + SIG_MARKUS),
    ("15:06", "m-1506-invite-dinner", "th-invite-dinner", "Priya Natarajan (Google Calendar) <calendar-notification@google.com>",
     "Invitation: Q4 team dinner @ Thu 26 Nov 2026 19:00 - 21:30 (CET)",
     "Priya Natarajan has invited you to an event.\n\nQ4 team dinner\nWhen: Thursday 26 Nov "
     "2026 19:00 – 21:30\nWhere: Restaurant Katz Orange, Bergstraße 22\n\nLet's celebrate the "
     "quarter! Please RSVP by Wednesday so I can confirm the table.\n\nGoing? Yes - Maybe - No"),
    ("15:33", "m-1533-dhl", "th-dhl", "DHL Paket <noreply@dhl.de>",
     "Ihre Sendung kommt heute zwischen 18:00 und 20:00",
     "Guten Tag,\n\nIhre Sendung 00340434161094042557 von Zalando SE wird heute zwischen 18:00 "
     "und 20:00 Uhr zugestellt. Sie können die Zustellung bis 17:00 Uhr auf einen Wunschtag "
     "verschieben.\n\nIhr DHL Team"),
    ("16:02", "m-1602-greenhouse-nudge", "th-greenhouse-ortega", "Greenhouse <no-reply@greenhouse.io>",
     "Scorecard due: Tomás Ortega",
     "Hi Lena, your interview with Tomás Ortega has ended. Please submit your scorecard by "
     "tomorrow 17:00 while it's fresh.\n\nHalden Systems Recruiting"),
    ("16:09", "m-1609-anna-brief", "th-claire-payouts", ANNA,
     "Re: Payout delay: need an update ASAP",
     "Thanks for the brief, Lena, it was exactly right. The call with their CEO went fine; "
     "they want a joint review of our certificate management in December. Can you propose "
     "two dates?\n\nAnna Keller\nCTO, Halden Systems GmbH"),
    ("16:47", "m-1647-jonas-groceries", "th-kita-pickup", JONAS,
     "Re: Emil heute abholen?",
     "Thank you!! Train is on time for now. I won't make it to the shop before it closes, "
     "could you grab milk and the cough syrup? Love you"),
    ("17:22", "m-1722-kita-cough", "th-kita-husten", KITA,
     "Emil: Husten",
     "Liebe Frau Hartmann,\n\nEmil hat heute Nachmittag viel gehustet, Fieber hatte er aber "
     "nicht. Bitte behalten Sie ihn im Auge; wenn er morgen Fieber hat, lassen Sie ihn bitte "
     "zu Hause.\n\nViele Grüße\nSabine Krüger"),
    ("17:41", "m-1741-n26-duplicate", "th-n26", "N26 <no-reply@n26.com>",
     "Card payment of €23.47 at REWE Markt Kastanienallee",
     "You paid €23.47 at REWE Markt Kastanienallee with your Mastercard ending 4417. This is "
     "your second payment of the same amount at this merchant within 2 minutes. If you did "
     "not make it, you can dispute it in the app."),
    ("18:05", "m-1805-mama-followup", "th-weihnachten", "Ute Hartmann <ute.hartmann@t-online.de>",
     "Re: Weihnachten bei uns?",
     "Und? Habt ihr schon überlegt? Papa will die Zugtickets bald buchen, die werden sonst so "
     "teuer.\n\nMama"),
    ("19:21", "m-1921-jonas-train", "th-kita-pickup", JONAS,
     "Re: Emil heute abholen?",
     "Arrived at Hauptbahnhof, home in 30 min. Shall I order something for dinner?"),
    ("20:43", "m-2043-amazon", "th-amazon-order", "Amazon.de <auto-confirm@amazon.de>",
     "Ihre Amazon.de Bestellung von \"De'Longhi Dinamica Plus ECAM 370.85.SB\"",
     "Hallo Lena Hartmann,\n\nvielen Dank für Ihre Bestellung. Voraussichtliche Lieferung: "
     "Mittwoch, 25. November.\n\nBestellnummer 302-4419817-5521936\nDe'Longhi Dinamica Plus "
     "ECAM 370.85.SB Kaffeevollautomat\nGesamtbetrag: EUR 649,00"),
    ("20:44", "m-2044-n26-amazon", "th-n26", "N26 <no-reply@n26.com>",
     "Card payment of €649.00 at Amazon.de",
     "You paid €649.00 at Amazon.de with your Mastercard ending 4417. This is your largest "
     "card payment this month."),
    ("21:12", "m-2112-priya-dinner", "th-invite-dinner", PRIYA,
     "Team dinner Thursday",
     "Hey, did you see the dinner invite? No pressure, just need numbers by Wednesday noon "
     "for the restaurant." + SIG_PRIYA),
    # --- Quiet hours again ---
    ("22:16", "m-2216-invite-qbr", "th-invite-qbr", "Claire Dubois (Google Calendar) <calendar-notification@google.com>",
     "Invitation: LumenPay x Halden quarterly business review @ Fri 27 Nov 2026 14:00 - 15:30 (CET)",
     "Claire Dubois has invited you to a meeting.\n\nLumenPay x Halden quarterly business "
     "review\nWhen: Friday 27 Nov 2026 14:00 – 15:30\nWhere: LumenPay Berlin, Schlesische "
     "Straße 26\n\nAgenda: payout reliability, certificate management review, 2027 volumes."),
    ("22:47", "m-2247-markus-urgent", "th-lumenpay-ceo", MARKUS,
     "URGENT: LumenPay escalated to their board",
     "Sorry for the late mail. LumenPay's CEO escalated to their board after all and wants a "
     "written remediation plan before their 9:00 meeting tomorrow. Can you join a call with "
     "Anna and me at 7:30 tomorrow? This is urgent.\n\nM." + SIG_MARKUS),
    ("23:05", "m-2305-pagerduty", "th-pd-48227", "PagerDuty <no-reply@pagerduty.com>",
     "[#48227] Triggered: critical: settlement-worker queue depth (ledger-prod)",
     "Incident #48227 triggered on service Ledger Production.\n\nSummary: settlement-worker "
     "queue depth above 5,000 for 10 minutes\nUrgency: high\nAssigned to: David Okafor "
     "(primary on-call)\n\nAcknowledge: https://halden.pagerduty.com/incidents/Q7Y2K1PL48227"),
    ("23:14", "m-2314-david-ack", "th-pd-48227", DAVID,
     "Re: [#48227] settlement-worker queue depth",
     "Ack'd, it's the nightly reconciliation run being slow after today's re-run. Not urgent, "
     "it's draining. Will watch it until it's below 1,000."),
    ("23:22", "m-2322-jonas-night", "th-kita-pickup", JONAS,
     "Re: Emil heute abholen?",
     "Emil's asleep, cough a bit better. Come to bed soon? xx"),
]

# Automated and low-stakes traffic through the day: (time, id, thread, sender, subject, body).
GITHUB = "GitHub <notifications@github.com>"
JIRA = "Jira <jira@halden-systems.atlassian.net>"
CONFLUENCE = "Confluence <confluence@halden-systems.atlassian.net>"
BACKGROUND = [
    ("06:12", "m-0612-gh-ci", "th-gh-1432", GITHUB, "Re: [halden/ledger] ledger: idempotent retry for settlement batches (PR #1432)",
     "All checks have passed: 14 successful checks. ci/integration (postgres-15) passed in 11m 32s.\n\n-- \nReply to this email directly or view it on GitHub."),
    ("06:58", "m-0658-pragmatic", "th-pragmatic", "The Pragmatic Engineer <pragmaticengineer@substack.com>",
     "The Pulse #114: Layoffs slow down, on-call pay, and more",
     "This week: what we're seeing in tech hiring at the end of 2026, how companies compensate on-call, and a deep dive into certificate management at scale.\n\nRead in app"),
    ("07:34", "m-0734-jira-led-882", "th-jira-led-882", JIRA, "[JIRA] (LED-882) Settlement batch failed for LUMENPAY",
     "Markus Vogel created LED-882: Settlement batch failed for LUMENPAY\nPriority: Highest\nAssignee: Lena Hartmann\nComponents: ledger, settlement"),
    ("07:49", "m-0749-slack-digest", "th-slack-digest", "Slack <feedback@slack.com>",
     "Catch up on 18 new messages in #payments-oncall",
     "Sofia Brandt: batch-02 client cert expired 00:00 UTC\nTim Schreiber: on my way, 25 min\nDavid Okafor: can take the comms to merchant support\n...and 15 more"),
    ("08:26", "m-0826-gh-review", "th-gh-1432", GITHUB, "Re: [halden/ledger] ledger: idempotent retry for settlement batches (PR #1432)",
     "@tim-schreiber approved these changes.\n\nLGTM, the dedup key matches what the bank's API documents.\n\n-- \nView it on GitHub."),
    ("08:44", "m-0844-jira-led-882", "th-jira-led-882", JIRA, "[JIRA] (LED-882) Settlement batch failed for LUMENPAY",
     "Sofia Brandt changed status: Open → In Progress\nSofia Brandt commented: new certificate loaded on batch-02, re-running."),
    ("09:12", "m-0912-gh-merged", "th-gh-1432", GITHUB, "Re: [halden/ledger] ledger: idempotent retry for settlement batches (PR #1432)",
     "Merged #1432 into main.\n\n-- \nView it on GitHub."),
    ("09:33", "m-0933-linkedin-jobs", "th-linkedin-jobs", "LinkedIn Job Alerts <jobalerts-noreply@linkedin.com>",
     "12 new jobs for \"Engineering Manager\" in Berlin",
     "Engineering Manager, Payments — Trade Republic · Berlin\nHead of Engineering — Enpal · Berlin\nEngineering Manager, Platform — N26 · Berlin\nSee all jobs"),
    ("09:52", "m-0952-confluence", "th-conf-roadmap", CONFLUENCE, "Priya Natarajan edited \"Q4 Roadmap v7\"",
     "Priya Natarajan edited the page Q4 Roadmap v7 in Payments.\n\nChanges: capacity table updated, ledger migration moved to week 49.\n\nView page"),
    ("10:21", "m-1021-jira-led-885", "th-jira-led-885", JIRA, "[JIRA] (LED-885) Alert 30 days before client certificate expiry",
     "David Okafor created LED-885: Alert 30 days before client certificate expiry\nPriority: High\nAssignee: David Okafor\nLinked: LED-882"),
    ("10:55", "m-1055-gh-1440", "th-gh-1440", GITHUB, "[halden/ledger] alerting: certificate expiry checks (PR #1440)",
     "@david-okafor requested your review on: halden/ledger#1440 alerting: certificate expiry checks.\n\n-- \nView it on GitHub."),
    ("11:08", "m-1108-zalando-refund", "th-zalando", "Zalando <info@service-mail.zalando.de>",
     "Deine Erstattung ist unterwegs",
     "Hallo Lena,\n\nwir haben deine Rücksendung erhalten. Die Erstattung über 59,95 € ist unterwegs und in den nächsten Tagen auf deinem Konto.\n\nDein Zalando Team"),
    ("11:29", "m-1129-slack-digest", "th-slack-digest", "Slack <feedback@slack.com>",
     "Catch up on 9 new messages in #payments-oncall",
     "Sofia Brandt: 1,812/1,840 accepted\nDavid Okafor: merchant support briefed\n...and 7 more"),
    ("11:57", "m-1157-jira-led-882", "th-jira-led-882", JIRA, "[JIRA] (LED-882) Settlement batch failed for LUMENPAY",
     "Sofia Brandt commented: 24 of 28 retried manually. 4 with closed accounts, see attachment."),
    ("12:33", "m-1233-heise", "th-heise", "heise online <newsletter@heise.de>",
     "heise-Newsletter: Zertifikatslaufzeiten sinken auf 47 Tage",
     "Die wichtigsten Meldungen: CA/Browser Forum beschließt kürzere Zertifikatslaufzeiten, neue Sicherheitslücken in VPN-Gateways, und ein Test der neuen Mittelklasse-Smartphones.\n\nZum Newsletter"),
    ("12:58", "m-1258-gh-1440-comment", "th-gh-1440", GITHUB, "Re: [halden/ledger] alerting: certificate expiry checks (PR #1440)",
     "@sofia-brandt commented: Can we also cover the HSM-held certs? They're not in the inventory yet.\n\n-- \nView it on GitHub."),
    ("13:12", "m-1312-bvg", "th-bvg", "BVG <newsletter@bvg.de>",
     "Dein Deutschlandticket: Preisänderung ab 1. Januar",
     "Hallo Lena,\n\nab dem 1. Januar 2027 kostet das Deutschlandticket 63 € im Monat. Für dich ändert sich sonst nichts, dein Abo läuft automatisch weiter.\n\nDeine BVG"),
    ("13:49", "m-1349-jira-led-882", "th-jira-led-882", JIRA, "[JIRA] (LED-882) Settlement batch failed for LUMENPAY",
     "Lena Hartmann changed status: In Progress → Resolved\nResolution: Fixed"),
    ("14:15", "m-1415-calendar-moved", "th-cal-training", "Google Calendar <calendar-notification@google.com>",
     "Updated invitation: Mandatory security awareness training @ Fri 27 Nov 2026 10:00 - 10:30 (CET)",
     "This event has been changed. The event moved from Monday 23 Nov 15:15 to Friday 27 Nov 10:00.\n\nGoing? Yes - Maybe - No"),
    ("14:40", "m-1440-confluence-postmortem", "th-conf-postmortem", CONFLUENCE, "Sofia Brandt created \"Postmortem: #48213 settlement batch failure\"",
     "Sofia Brandt created a page in Incidents.\n\nPostmortem: #48213 settlement batch failure (draft)\n\nView page"),
    ("15:11", "m-1511-gh-1440-approved", "th-gh-1440", GITHUB, "Re: [halden/ledger] alerting: certificate expiry checks (PR #1440)",
     "@tim-schreiber approved these changes.\n\n-- \nView it on GitHub."),
    ("15:28", "m-1528-urban-sports", "th-usc", "Urban Sports Club <hello@urbansportsclub.com>",
     "Your Pilates class today at 18:30",
     "Hi Lena, see you at Pilates Loft Mitte today at 18:30 (Pilates Mat, 60 min). Cancel free of charge until 16:30."),
    ("15:52", "m-1552-jira-led-887", "th-jira-led-887", JIRA, "[JIRA] (LED-887) Inventory of HSM-held certificates",
     "Sofia Brandt created LED-887: Inventory of HSM-held certificates\nPriority: Medium\nAssignee: Tim Schreiber"),
    ("16:25", "m-1625-slack-digest", "th-slack-digest", "Slack <feedback@slack.com>",
     "Catch up on 6 new messages in #payments",
     "Priya Natarajan: roadmap deck v8 is up\nDavid Okafor: LED-885 ready for review\n...and 4 more"),
    ("16:58", "m-1658-gh-1441", "th-gh-1441", GITHUB, "[halden/ledger] reconciliation: batch status page (PR #1441)",
     "@david-okafor opened halden/ledger#1441 reconciliation: batch status page.\n\n-- \nView it on GitHub."),
    ("17:33", "m-1733-linkedin", "th-linkedin-ortega", "LinkedIn <messages-noreply@linkedin.com>",
     "Tomás Ortega sent you a message",
     "Tomás Ortega: Thanks for the conversation today, Lena! I really enjoyed the design discussion.\n\nView message"),
    ("18:12", "m-1812-zeit", "th-zeit", "ZEIT ONLINE <newsletter@zeit.de>",
     "Was jetzt? Der Abend",
     "Guten Abend, das Wichtigste des Tages: die Haushaltsverhandlungen, der Wintereinbruch im Osten und ein Interview über Schlaf und Stress.\n\nZum Newsletter"),
    ("19:05", "m-1905-dhl-delivered", "th-dhl", "DHL Paket <noreply@dhl.de>",
     "Ihre Sendung wurde zugestellt",
     "Guten Tag,\n\nIhre Sendung 00340434161094042557 wurde heute um 19:02 Uhr an Ihrer Wohnungstür zugestellt.\n\nIhr DHL Team"),
    ("19:50", "m-1950-ubereats", "th-ubereats", "Uber Eats <uber@uber.com>",
     "Your order from Umami Prenzlauer Berg",
     "Thanks for ordering, Lena. Your order is being prepared and will arrive at 20:25.\nTotal: €34.60"),
    ("20:15", "m-2015-jira-weekly", "th-jira-weekly", JIRA, "[JIRA] Weekly digest for Payments",
     "14 issues created, 11 resolved this week in LED. Top: LED-882 (resolved), LED-885 (in review), LED-887 (open)."),
    ("21:30", "m-2130-spotify", "th-spotify", "Spotify <no-reply@spotify.com>",
     "Dein Spotify Family-Upgrade",
     "Hallo Lena, dein Upgrade auf Spotify Family ist aktiv. Wir haben die Differenz von 6,00 € für diesen Monat berechnet."),
    ("22:05", "m-2205-gh-nightly", "th-gh-nightly", GITHUB, "[halden/ledger] Nightly build succeeded",
     "Nightly build #2291 on main succeeded in 24m 11s."),
    ("22:31", "m-2231-n26-weekly", "th-n26", "N26 <no-reply@n26.com>",
     "Your weekly spending summary",
     "You spent €812.05 this week across 11 card payments. Biggest: Amazon.de €649.00. Your Dining space is over budget for November."),
    ("23:28", "m-2328-pagerduty-resolved", "th-pd-48227", "PagerDuty <no-reply@pagerduty.com>",
     "[#48227] Resolved: settlement-worker queue depth (ledger-prod)",
     "Incident #48227 resolved by David Okafor. Duration: 23 min."),
]

# Team chat through the working day (short, many): (time, sender, thread, text).
CHAT = [
    ("07:58", TIM, "chat-oncall", "On the U2 now, at the office 8:20. Do we have the CSR for the new cert ready?"),
    ("08:03", SOFIA, "chat-oncall", "CSR is in the vault under batch-02/2026-11. Tim, you just need to sign it."),
    ("08:31", DAVID, "chat-oncall", "Merchant support asked for a status line. I'll write 'delayed, no payouts lost' unless someone objects."),
    ("08:57", PRIYA, "chat-payments", "Stand-up in 3 min, keeping it short."),
    ("09:14", DAVID, "chat-oncall", "Status page updated."),
    ("09:49", TIM, "chat-oncall", "The old cert renewal ticket was sitting in my queue since October 14. My bad, sorry."),
    ("10:06", SOFIA, "chat-oncall", "No blame, the reminder went to a dead mailing list. Fixing that in the postmortem."),
    ("10:27", PRIYA, "chat-payments", "Capacity numbers look fine, thanks. Can you share the spreadsheet with David?"),
    ("10:58", DAVID, "chat-payments", "Anyone up for lunch at 12? Ah you're out with LumenPay. Next time."),
    ("11:33", SOFIA, "chat-oncall", "Retried 24, 4 left (closed accounts). Sending the list to Lena."),
    ("11:52", TIM, "chat-payments", "Coffee machine on 3 is broken again, FYI."),
    ("12:15", PRIYA, "chat-payments", "Deck v8 is up. Lena, could you double-check slide 12 before tomorrow's go/no-go?"),
    ("13:08", DAVID, "chat-payments", "Reviewed the status page copy with Sofia, all good."),
    ("13:37", TIM, "chat-payments", "Running 5 min late to the arch sync, start without me."),
    ("14:29", SOFIA, "chat-oncall", "Closing the bridge channel, moving follow-ups to LED-882."),
    ("14:55", DAVID, "chat-payments", "Interview room Elbe is booked until 16:15 if you run over."),
    ("15:41", PRIYA, "chat-payments", "Can someone from payments join the finance sync on Thursday at 11? Optional."),
    ("16:12", TIM, "chat-payments", "HSM cert inventory started, LED-887."),
    ("16:39", DAVID, "chat-payments", "PR #1441 is up when someone has a minute, no rush."),
    ("17:18", PRIYA, "chat-payments", "Heading out. Great work today everyone."),
    ("18:47", SOFIA, "chat-oncall", "Handing on-call to David for the night. Queue is healthy."),
    ("08:12", TIM, "chat-oncall", "At the office. Signing the CSR now."),
    ("08:24", SOFIA, "chat-oncall", "Cert deployed to batch-02, running a dry run against the bank sandbox."),
    ("08:49", TIM, "chat-oncall", "Dry run green. Go for the real re-run?"),
    ("08:50", SOFIA, "chat-oncall", "Go. Starting now."),
    ("09:38", DAVID, "chat-oncall", "Merchant support says the first merchants see their money. Nice."),
    ("10:16", TIM, "chat-payments", "Who has the key for Raum Havel? Locked."),
    ("11:44", DAVID, "chat-payments", "LumenPay ops pinged me directly, I pointed them to Lena's summary."),
    ("12:48", SOFIA, "chat-oncall", "Four closed-account merchants listed in LED-882."),
    ("13:55", TIM, "chat-payments", "Arch sync notes in Confluence, ledger migration stays in week 49."),
    ("15:22", SOFIA, "chat-oncall", "Postmortem draft ready for comments."),
    ("16:51", DAVID, "chat-payments", "LED-885 merged, alerting is live."),
    ("17:05", PRIYA, "chat-payments", "Reminder: go/no-go is tomorrow at 10 in Spree."),
]


def message(spec, mid, thread, sender, subject, body):
    if isinstance(spec, tuple):
        when = at(spec[1], spec[0])
    else:
        when = at(spec)
    return when, {"id": mid, "thread_id": thread, "sender": sender, "subject": subject,
                  "body": body, "received_at": when}


def all_messages():
    out = [message(*m) for m in MESSAGES]
    out += [message(*m) for m in BACKGROUND]
    for spec, sender, thread, text in CHAT:
        mid = "c-%s-%s" % (spec.replace(":", ""), sender.split()[0].lower())
        out.append(message(spec, mid, thread, sender, "", text))
    return out


def merchant_key(merchant):
    """finance's merchant key: lowercased words, all-digit words dropped."""
    words = [w for w in re.split(r"[^\w]+", merchant.lower()) if w and not w.isdigit()]
    return " ".join(words)


def check_bills_visible(transactions):
    """The tick's upcoming_bills selection is the 100 most recent spends of merchants paid at
    least twice. Every monthly bill's oldest needed payment (August's) must stay inside it
    until the last tick, with a margin, or the bill drops out of the day."""
    spends = [t for t in transactions if t["amount_minor"] > 0]
    spends += [{"merchant": m, "amount_minor": a, "time": at(s)}
               for s, _, m, _, a in DAY_TRANSACTIONS if a > 0]
    paid = {}
    for t in spends:
        paid[merchant_key(t["merchant"])] = paid.get(merchant_key(t["merchant"]), 0) + 1
    repeated = sorted((datetime.fromisoformat(t["time"]) for t in spends
                       if paid[merchant_key(t["merchant"])] >= 2), reverse=True)
    oldest_needed = min(datetime.fromisoformat(t["time"]) for t in transactions
                        if t["merchant"] in ("NETFLIX.COM", "Vodafone GmbH Mobilfunk"))
    inside = sum(1 for t in repeated if t >= oldest_needed)
    assert inside <= PROPOSAL_TRANSACTIONS_MAX - BILLS_MARGIN, inside


# ---------------------------------------------------------------------------------------------
# Budgets
# ---------------------------------------------------------------------------------------------

def budgets_for(transactions):
    """Round monthly limits. Dining is set so November is under its limit until the lunch with
    Claire and over it after; shopping so the evening's espresso machine pushes it over; the
    others comfortably above their pace. Categories follow the merchants' keywords (cafe,
    restaurant, amazon, ...), so the result does not depend on MCCs reaching the agent."""
    def spent(pred):
        total = 0
        for t in transactions:
            if t["time"].startswith("2026-11") and t["amount_minor"] > 0 and pred(t["merchant"]):
                total += t["amount_minor"]
        return total

    def dining(m):
        low = m.lower()
        return any(k in low for k in ("restaurant", "cafe", "starbucks", "mcdonald", "deliveroo",
                                        "uber eats"))

    lunch = next(t for t in DAY_TRANSACTIONS if t[1] == "tx-20261123-einstein")[4]
    before = spent(dining) + sum(t[4] for t in DAY_TRANSACTIONS
                                 if t[0] < "13:27" and dining(t[2]))
    # The smallest multiple of 25 EUR at least 10 EUR above the spend before lunch.
    dining_limit = -(-(before + 1000) // 2500) * 2500
    assert before < dining_limit < before + lunch, (before, dining_limit)
    amazon = next(t for t in DAY_TRANSACTIONS if t[1] == "tx-20261123-amazon")[4]
    shopping_before = spent(lambda m: "amazon" in m.lower())
    shopping_limit = -(-(shopping_before + 10000) // 5000) * 5000
    assert shopping_before < shopping_limit < shopping_before + amazon
    # Groceries (supermarkets and the meal box): 10 % above the month's pace at the end of the
    # day, duplicate charge included, rounded up to 50 EUR, so it never goes at risk.
    groceries = spent(lambda m: any(k in m for k in ("REWE", "Lidl", "ALDI", "Bio Company",
                                                     "HelloFresh")))
    groceries += sum(t[4] for t in DAY_TRANSACTIONS if "REWE" in t[2])
    groceries_limit = -(-(groceries * 30 // 23 * 11 // 10) // 5000) * 5000
    return [
        {"category": "groceries", "currency": "EUR", "limit_minor": groceries_limit},
        {"category": "dining", "currency": "EUR", "limit_minor": dining_limit},
        {"category": "shopping", "currency": "EUR", "limit_minor": shopping_limit},
        {"category": "transport", "currency": "EUR", "limit_minor": 12000},
        {"category": "subscriptions", "currency": "EUR", "limit_minor": 5000},
        {"category": "entertainment", "currency": "EUR", "limit_minor": 10000},
    ]


# ---------------------------------------------------------------------------------------------
# Assembly
# ---------------------------------------------------------------------------------------------

def build():
    rng = Rng(0x2026_1123)
    transactions = history(rng)
    check_bills_visible(transactions)
    signals = []

    for when, m in all_messages():
        signals.append((when, "message", m))
    for spec, kind, data in CALENDAR_SIGNALS:
        signals.append((at(spec), kind, data))
    for spec, data in INVITATIONS:
        signals.append((at(spec), "invitation", data))
    for spec, data in ANSWERS:
        signals.append((at(spec), "answer", data))
    for spec, tid, merchant, mcc, amount in DAY_TRANSACTIONS:
        signals.append((at(spec), "transaction", {
            "id": tid, "merchant": merchant, "mcc": "%04d" % mcc, "amount_minor": amount,
            "currency": "EUR", "time": at(spec)}))
    # Last night's sleep syncs when the phone wakes up, before the first tick.
    signals.append((at("05:47"), "sleep_session", LAST_NIGHT))
    for spec, data in readings(rng):
        signals.append((at(spec), "reading", data))

    # Stable order by time; ties keep the order above.
    signals.sort(key=lambda s: datetime.fromisoformat(s[0]))
    scenario = {
        "scenario": "day",
        "description": (
            "Monday 23 November 2026 for Lena Hartmann, an engineering manager in Berlin: an "
            "overnight payment incident, a client escalation, back-to-back meetings with an "
            "overlap, a double booking and a tight transition, four meeting invitations (one "
            "confirmed, one declined, two left open), a duplicate card charge, a large "
            "evening purchase, a dining budget that goes over at lunch, a weekly bill due in "
            "three days and a monthly one in three, a short night and a stress peak in the "
            "afternoon. See scenarios/README.md."),
        "start": at("06:30"),
        "end": at("23:30"),
        "tick_minutes": 15,
        "utc_offset_minutes": 60,
        "profile": profile(budgets_for(transactions)),
        "initial": {
            "events": INITIAL_EVENTS,
            "transactions": transactions,
            "sleep_sessions": sleep_history(),
        },
        "signals": [{"at": when, "kind": kind, "data": data} for when, kind, data in signals],
    }
    return scenario


def main():
    scenario = build()
    text = json.dumps(scenario, indent=1, ensure_ascii=False) + "\n"
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    counts = {}
    for s in scenario["signals"]:
        counts[s["kind"]] = counts.get(s["kind"], 0) + 1
    print("wrote %s: %d bytes, %d signals %s, %d initial transactions" % (
        OUT, len(text.encode("utf-8")), len(scenario["signals"]), counts,
        len(scenario["initial"]["transactions"])), file=sys.stderr)


if __name__ == "__main__":
    main()
