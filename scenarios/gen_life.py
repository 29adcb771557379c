#!/usr/bin/env python3
"""Writes months of Lena Hartmann's life as a live assistant would hear it.

    python3 scenarios/gen_life.py --days N [--start YYYY-MM-DD] [--seed S] --out DIR

writes DIR/setup.json (a live setup: scenarios/live.json's profile plus the first day's
`start`, `"time_zone": "Europe/Berlin"` and an `initial` with the weeks before) and
DIR/signals.jsonl (one signal a line, in the order they arrive). `scenarios/check_life.py DIR`
checks what it wrote. The persona, her cast and the shapes of every signal are gen_day.py's
(scenarios/day.json); this is her life around that day, from --start (default 2026-10-05, a
Monday) for --days days.

Deterministic and stdlib only: a splitmix64 stream per day and purpose (so a day does not
change when another is added, and `--days 3` writes the first 3 days of `--days 120` exactly),
no clock, no set or hash() order, only IEEE float +-*/ and round(). zoneinfo gives the local
offsets of Europe/Berlin and America/New_York, nothing else.

The life:
- Working weeks (Mon-Fri 09:00-17:30) and weekends; Berlin's public holidays; the Christmas
  break (the Monday of the week of 21 Dec to 1 Jan: no work mail but a few, an out-of-office
  event, Lübeck with her parents, more leisure spending).
- A work trip to New York each year, from the last Thursday of October to the Saturday of the
  week after (2026: Thu 29 Oct to Sat 7 Nov). A `utc_offset` signal when her phone comes on
  after landing, with `time_zone`, one at New York's own DST change while she is there (the
  phone reports it) and one when she is back in Berlin. None for Berlin's DST changes at home:
  a live session derives those from the setup's time zone. Every `at`, `received_at` and
  transaction `time` is written in the offset of where she is at that instant (until the
  phone comes on after landing, that is where she left). Event times are written in the
  offset of the event's place.
- The watch: a `reading` every 5 minutes while she is awake and wears it (not under the
  shower, at Pilates, swimming or while it charges); a `sleep_session` each morning for the
  night, synced a few minutes after waking (after landing for the night flight), with short
  nights, a few missing ones (the watch on its charger) and a bad week (the second week after
  the trip: a release crunch and a coughing child).
- The inbox: mail from her boss, partner, client and the Kita (the four VIPs; some urgent,
  some in quiet hours), colleagues, recruiting, newsletters and machines, threads with action
  items and due phrases, team and family chat; colleagues in Berlin keep Berlin hours while
  she is in New York, so their day arrives in her night.
- The calendar: the weekly meetings written out each Sunday for the coming week, events added
  for the coming days (some cancelled, some moved), overlaps; invitations several a week,
  answered minutes to hours later, sometimes the next morning, sometimes never, in day.json's
  by-item form (`invitation:<id>` of calendar.schedule_event, the only form a generator can
  write: the by-question form needs the call_id of a decision not yet made).
- Money: card spending, the monthly bills on their days, the salary and child benefit as
  credits (negative amounts, finance's convention), refunds of returns, dollars in New York,
  and fraud about once or twice a month (a far-too-large charge at a merchant never seen, or
  the same charge twice minutes apart).
"""

import argparse
import json
import os
import sys
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

# gen_day.py stands next to this file: importable from any cwd, and also when imported.
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from gen_day import (  # noqa: E402  (the persona, her cast and places: gen_day.py's)
    AMAZON, ANNA, CLAIRE, COFFEE, CONFLUENCE, DAVID, DM, GITHUB, HELLOFRESH, HQ_ELBE, HQ_HAVEL,
    HQ_SPREE, JIRA, JONAS, KITA, KITA_ADDR, LENA, MARKUS, ME, PRIYA, SIG_CLAIRE, SIG_LENA,
    SIG_MARKUS, SIG_PRIYA, SIG_SOFIA, SOFIA, TIM, UBER, profile)
from gen_day import MONTHLY as DAY_MONTHLY, Rng as DayRng  # noqa: E402

BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"
ZONES = {BERLIN: ZoneInfo(BERLIN), NEW_YORK: ZoneInfo(NEW_YORK)}
M64 = 0xFFFFFFFFFFFFFFFF
DAY_S = 86400

DEFAULT_START = date(2026, 10, 5)  # a Monday
HISTORY_DAYS = 92  # card history before the start
SLEEP_HISTORY_NIGHTS = 14
EVENT_CONTEXT_DAYS = 7  # initial events: those ending at most this long before the start

# Tie order of signals at the same instant.
RANK = {"utc_offset": 0, "sleep_session": 1, "event": 2, "cancel_event": 3, "invitation": 4,
        "message": 5, "transaction": 6, "reading": 7, "answer": 8}


# ---------------------------------------------------------------------------------------------
# Randomness
# ---------------------------------------------------------------------------------------------

class Rng(DayRng):
    """gen_day.py's splitmix64 stream (next, below, between, pick), with chances in tenths of
    a percent and floats."""

    def chance(self, percent):
        return self.below(1000) < percent * 10

    def unit(self):
        """A float in [0, 1): 53 bits of the stream (exact in IEEE doubles)."""
        return (self.next() >> 11) / 9007199254740992.0

    def uniform(self, lo, hi):
        return lo + (hi - lo) * self.unit()

    def sample(self, items, k):
        pool = list(items)
        out = []
        while pool and len(out) < k:
            out.append(pool.pop(self.below(len(pool))))
        return out


def stream_seed(*parts):
    """FNV-1a over the parts' text, then one splitmix step: a seed per (seed, day, purpose)."""
    h = 0xCBF29CE484222325
    for byte in "|".join(str(p) for p in parts).encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & M64
    return Rng(h).next()


# ---------------------------------------------------------------------------------------------
# Time: instants are integer Unix seconds
# ---------------------------------------------------------------------------------------------

def wall(zone, d, minute, second=0):
    """The instant of local wall time `minute` (may exceed 1440: the next days) on date d in
    zone. An ambiguous time (the repeated autumn hour) is its first occurrence; a time in the
    spring gap is read with the offset before it."""
    d = d + timedelta(days=minute // 1440)
    minute %= 1440
    local = datetime(d.year, d.month, d.day, minute // 60, minute % 60, second,
                     tzinfo=ZONES[zone])
    return int(local.timestamp())


def offset_minutes(zone, t):
    return int(datetime.fromtimestamp(t, ZONES[zone]).utcoffset().total_seconds()) // 60


def fmt_in(t, zone):
    return datetime.fromtimestamp(t, ZONES[zone]).isoformat()


def local_dt(t, zone):
    return datetime.fromtimestamp(t, ZONES[zone])


def transitions(zone, t0, t1):
    """The instants in [t0, t1) at which zone's offset changes (to the second)."""
    out = []
    step = 3600
    t = t0
    before = offset_minutes(zone, t)
    while t < t1:
        nxt = min(t + step, t1)
        after = offset_minutes(zone, nxt)
        if after != before:
            lo, hi = t, nxt  # offset(lo) == before, offset(hi) != before
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if offset_minutes(zone, mid) == before:
                    lo = mid
                else:
                    hi = mid
            out.append(hi)
            before = after
        t = nxt
    return out


def easter(year):
    """Gregorian Easter Sunday (the anonymous algorithm, integers only)."""
    a = year % 19
    b, c = divmod(year, 100)
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l) // 451
    month, day = divmod(h + l - 7 * m + 114, 31)
    return date(year, month, day + 1)


def berlin_holidays(year):
    e = easter(year)
    return {
        date(year, 1, 1): "Neujahr", date(year, 3, 8): "Frauentag",
        e - timedelta(days=2): "Karfreitag", e + timedelta(days=1): "Ostermontag",
        date(year, 5, 1): "Tag der Arbeit", e + timedelta(days=39): "Christi Himmelfahrt",
        e + timedelta(days=50): "Pfingstmontag", date(year, 10, 3): "Tag der Deutschen Einheit",
        date(year, 12, 25): "1. Weihnachtstag", date(year, 12, 26): "2. Weihnachtstag",
    }


def business_day(d, holidays):
    while d.weekday() >= 5 or d in holidays:
        d += timedelta(days=1)
    return d


def last_business_day(year, month, holidays):
    d = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
    while d.weekday() >= 5 or d in holidays:
        d -= timedelta(days=1)
    return d


WEEKDAYS_EN = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
WEEKDAYS_DE = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]
MONTHS_EN = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
MONTHS_LONG = ["January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December"]


def hm(t, zone):
    x = local_dt(t, zone)
    return "%02d:%02d" % (x.hour, x.minute)


def when_text(t0, t1, zone):
    """'Tue 13 Oct 2026 10:00 - 11:00 (CEST)' as Google Calendar writes it."""
    a, b = local_dt(t0, zone), local_dt(t1, zone)
    return "%s %d %s %d %02d:%02d - %02d:%02d (%s)" % (
        WEEKDAYS_EN[a.weekday()], a.day, MONTHS_EN[a.month - 1], a.year, a.hour, a.minute,
        b.hour, b.minute, a.tzname())


def cap(text):
    return text[:1].upper() + text[1:]


def euro(minor):
    return "€%d.%02d" % (minor // 100, minor % 100)


# ---------------------------------------------------------------------------------------------
# Cast (gen_day.py's, imported above, and the people around them)
# ---------------------------------------------------------------------------------------------

UTE = "Ute Hartmann <ute.hartmann@t-online.de>"
ROLF = "Rolf Hartmann <rolf.hartmann@t-online.de>"
KATRIN = "Katrin Hartmann <katrin.hartmann@posteo.de>"
NELE = "Nele Becker <nele.becker@gmail.com>"
RACHEL = "Rachel Kim <rachel.kim@halden-systems.com>"
ETHAN = "Ethan Brooks <ethan.brooks@northwindbank.com>"
AMELIE = "Amelie Roth <amelie.roth@kestrel-kyc.com>"
NIKLAS = "Niklas Brenner <niklas.brenner@kestrel-kyc.com>"
PARENTS = ["Mia Schulz <mia.schulz@web.de>", "Tobias Wendt <t.wendt@gmx.net>",
           "Ayşe Demir <ayse.demir@gmail.com>", "Julia Neumann <julia.neumann@posteo.de>",
           "Felix Braun <felix.braun@mailbox.org>"]
SLACK = "Slack <feedback@slack.com>"
PAGERDUTY = "PagerDuty <no-reply@pagerduty.com>"
AWS = "AWS Notifications <no-reply@sns.amazonaws.com>"
N26 = "N26 <no-reply@n26.com>"
GREENHOUSE = "Greenhouse <no-reply@greenhouse.io>"
FINANCE_TEAM = "Finance Team <finance@halden-systems.de>"
IT_DESK = "IT Service Desk <it-servicedesk@halden-systems.de>"
PEOPLE = "People Team <people@halden-systems.de>"
DOCTOLIB = "Doctolib <no-reply@doctolib.de>"

SIG_RACHEL = "\n\n--\nRachel Kim\nHead of Partnerships, Halden Systems Inc.\n245 Park Ave, New York, NY"


def address(sender):
    return sender.split("<")[1].rstrip(">")


def first_name(sender):
    return sender.split()[0]


HQ_ODER = "Halden HQ, Raum Oder 2.08"
HQ_ROOMS = [HQ_SPREE, HQ_HAVEL, HQ_ELBE, HQ_ODER]
NY_OFFICE = "Halden Systems Inc., 245 Park Ave, 24th floor"
NY_CLIENT = "Northwind Bank, 1 Liberty Plaza"

PROJECTS = ["ledger migration", "reconciliation UI", "payout API v2", "Kestrel KYC integration",
            "card tokenization", "fraud rules engine", "settlement batch retries",
            "SEPA Instant rollout", "PSD3 readiness", "merchant onboarding flow",
            "FX conversion service", "chargeback tooling"]
DOCS = ["Q1 capacity plan", "2027 hiring plan", "ledger migration runbook", "budget proposal",
        "on-call rotation for December", "performance review drafts", "Q1 OKR draft",
        "KYC vendor comparison", "board update slides", "incident summary for LumenPay",
        "headcount request", "architecture decision record on event sourcing",
        "SEPA Instant launch checklist", "team health survey results"]
CANDIDATES = ["Tomás Ortega", "Mei Lin Zhou", "Jakob Lindqvist", "Amara Nwosu", "Pavel Novák",
              "Sara Conti", "Hannah Weiß", "Omar Haddad", "Lucía Fernández", "Ben Adler",
              "Yuki Tanaka", "Ines Moreau", "Kofi Mensah", "Marta Kowalska"]
BERLIN_NEWS = ["Streik bei der S-Bahn", "Baustelle auf der A100", "neue Radwege in Pankow",
               "Mieten steigen weiter", "Kita-Plätze in Prenzlauer Berg",
               "der Senat und der Haushalt", "Glühwein-Test auf den Weihnachtsmärkten",
               "BVG-Tarife 2027", "Herbststurm über Brandenburg", "Tegel wird Wohnviertel",
               "Wahlkampf im Abgeordnetenhaus", "der erste Frost", "Fernwärme wird teurer",
               "die Clubszene im Winter", "Schulessen in Berlin", "Wohnungsbau in Lichtenberg"]
TECH_NEWS = ["Zertifikatslaufzeiten sinken auf 47 Tage", "neue Lücken in VPN-Gateways",
             "EU-Kommission prüft Cloud-Verträge", "Rust im Linux-Kernel",
             "Passkeys für Online-Banking", "Digitaler Euro: der Zeitplan",
             "KI-Verordnung tritt in Kraft", "Post-Quanten-Kryptografie in TLS",
             "Open Banking unter PSD3", "Ausfall bei einem großen Cloud-Anbieter"]


# ---------------------------------------------------------------------------------------------
# Merchants (COFFEE, AMAZON, DM, UBER and HELLOFRESH are gen_day.py's)
# ---------------------------------------------------------------------------------------------

LUNCH_PLACES = [("Kantine Halden HQ", 5812, 590, 890, 40), ("Restaurant Chen Che", 5812, 1090, 1390, 12),
                ("dean&david Rosenthaler Str", 5812, 990, 1390, 14),
                ("Zeit fuer Brot Alte Schoenhauser", 5462, 450, 1300, 10),
                ("Mama Trattoria Mitte", 5812, 1190, 1690, 8)]
GROCERS_BIG = [("REWE Markt Kastanienallee", 5411), ("Lidl Berlin-Prenzlauer Berg", 5411)]
GROCERS_SMALL = [("ALDI Nord Schoenhauser Allee", 5411), ("Bio Company Prenzlauer Berg", 5411),
                 ("REWE Markt Kastanienallee", 5411)]
DELIVERY = [("Deliveroo", 5812), ("Uber Eats", 5814), ("Wolt", 5814)]
ZALANDO = ("Zalando SE", 5691)
DINING = ["Restaurant Katz Orange", "Restaurant Lode und Stijn", "Restaurant Sasaya",
          "Restaurant Kanaan", "Restaurant Lucky Leek", "Restaurant Hako Ramen", "Restaurant Mogg",
          "Restaurant Maria Bonita", "Restaurant Chutnify", "Restaurant Tisk", "Restaurant Nolle",
          "Restaurant Umami Prenzlauer Berg", "Restaurant Fes Turkish BBQ", "Restaurant Dae Mon",
          "Restaurant Pastis Wilmersdorf", "Restaurant Mabuhay", "Restaurant La Bodega",
          "Restaurant Zur Letzten Instanz", "Restaurant Cocolo Ramen", "Restaurant Khwan",
          "Cafe Fleury", "Cafe Anna Blume", "Cafe Kreuzzwei", "Cafe Bravo", "Cafe Frieda",
          "Cafe Matilda", "Cafe Oliv", "Cafe Neundrei", "Cafe The Barn Mitte", "Cafe Godshot",
          "Cafe Einstein Stammhaus", "Restaurant Transit Mitte", "Restaurant Ixthys"]
SHOPS = [("Dussmann das KulturKaufhaus", 5942, 1400, 4200), ("Hugendubel Tauentzienstrasse", 5942, 1200, 3600),
         ("Bauhaus Prenzlauer Berg", 5200, 900, 6400), ("TK Maxx Alexanderplatz", 5651, 1900, 5900),
         ("Rossmann Schoenhauser Allee", 5912, 600, 2400), ("Depot Alexa", 5719, 900, 3900),
         ("Decathlon Mitte", 5941, 1500, 6900), ("Thalia Alexa", 5942, 1100, 2900),
         ("Flying Tiger Copenhagen", 5331, 500, 2200), ("Blumen Damaschke", 5992, 1800, 3900),
         ("Spielzeugladen Kleine Welt", 5945, 1200, 3900), ("Apotheke am Kollwitzplatz", 5912, 690, 2390),
         ("Mueller Drogerie Alexa", 5912, 700, 2600), ("IKEA Berlin-Lichtenberg", 5712, 2900, 8900),
         ("Uniqlo Tauentzienstrasse", 5651, 1990, 7900), ("Lush Hackescher Markt", 5977, 900, 3200),
         ("Kinderladen Zwergenstark", 5641, 1500, 4800), ("Sportscheck Alexanderplatz", 5941, 2500, 8800),
         ("Mauerpark Flohmarkt SumUp", 5931, 800, 2500), ("Markthalle Neun Haendler", 5499, 900, 2800)]
LEISURE = [("Kino International", 7832, 1100, 2600), ("Volksbuehne Berlin", 7922, 2200, 4400),
           ("Pergamonmuseum Staatliche Museen", 7991, 1200, 2400), ("Stadtbad Oderberger Strasse", 7997, 650, 1300),
           ("Zoo Berlin", 7998, 2800, 5200), ("Deutsches Technikmuseum", 7991, 1400, 2600),
           ("Labyrinth Kindermuseum", 7991, 900, 1800), ("Prater Garten", 5813, 1800, 4200)]
XMAS_SHOPS = [("Kaufhaus des Westens", 5311, 4500, 14900), ("Spielzeugladen Kleine Welt", 5945, 1900, 6900),
              ("Dussmann das KulturKaufhaus", 5942, 1900, 5900), ("Manufactum Warenhaus", 5399, 2900, 8900),
              ("Weihnachtsmarkt Gendarmenmarkt SumUp", 5814, 650, 2400),
              ("Weihnachtsmarkt Kulturbrauerei SumUp", 5814, 550, 1900)]
LUEBECK = [("Niederegger Marzipan Cafe Luebeck", 5814, 1200, 3400), ("Weihnachtsmarkt Luebeck SumUp", 5814, 600, 1900),
           ("Edeka Luebeck Altstadt", 5411, 1900, 5400), ("Restaurant Schiffergesellschaft", 5812, 6400, 11800)]
NY_FOOD = [("Blue Bottle Coffee", 5814, 550, 850), ("Pret A Manger", 5814, 900, 1600),
           ("Joe's Pizza Broadway", 5812, 450, 1300), ("Sweetgreen", 5812, 1450, 1950),
           ("Shake Shack", 5812, 1600, 2600), ("Levain Bakery", 5462, 500, 1200),
           ("Katz's Delicatessen", 5812, 2900, 4200), ("Whole Foods Market", 5411, 1200, 4500),
           ("Duane Reade", 5912, 700, 2400), ("Joe Coffee", 5814, 450, 750)]
NY_DINNER = ["Carbone", "Balthazar", "Via Carota", "Lilia", "Peter Luger Steak House", "Cote", "Lucali"]
NY_OTHER = [("MoMA Museum of Modern Art", 7991, 3000, 3000), ("FAO Schwarz", 5945, 2900, 7900),
            ("Strand Book Store", 5942, 1800, 4600), ("Macy's Herald Square", 5311, 3900, 12900),
            ("Uniqlo Fifth Avenue", 5651, 2900, 8900)]
FRAUD_MERCHANTS = ["SHOPIFY* VELTRIX STORE", "PAYPAL *GAMESDEALZ", "WWW.LUXWATCH-OUTLET.COM",
                   "BRT*ELECTRO DEAL LTD", "SQ *NIGHTMARKET VILNIUS", "APPLEPAY* KRYPTOVAULT",
                   "AMZN MKTP HK SELLER", "TRAVELNEST BOOKINGS CY", "ZENOPHONE STORE SOFIA",
                   "FASTJET TICKETS LAGOS", "SKINSHOP CSGO MARKET", "EURO GOLD BULLION LV",
                   "GIFTCARD EXPRESS MT", "BRIGHTCLOUD VPN PA", "LUMINA BEAUTY LIMITED",
                   "QUICKPAY* OZON MARKET", "STEAMPOWERED SELLER UA", "MOBILEREFILL GLOBAL",
                   "ELITE SNEAKERS HK", "NEXUS GAMING CREDITS", "POLARIS ELECTRONICS PL",
                   "SOFTKEY WAREHOUSE", "VELOCITY RIDES MT", "ORIONTICKETS RO"]

# Bills: (merchant, mcc, day of month, amount, direct debit?). Direct debits move to the next
# business day; card subscriptions charge on the day. gen_day.py's bills and two more, in the
# order of their day of the month (a stable sort: bills of one day keep gen_day.py's order).
MONTHLY = sorted(DAY_MONTHLY + [
    ("Trade Republic Sparplan", 6211, 2, 25000, True),
    ("Kita Sonnenblume Essensgeld", 8211, 5, 2300, True),
], key=lambda bill: bill[2])
SALARY = "Halden Systems GmbH Gehalt"
KINDERGELD = "Familienkasse Berlin-Brandenburg Kindergeld"


# ---------------------------------------------------------------------------------------------
# The year's shape: the trip, the Christmas break, the bad week
# ---------------------------------------------------------------------------------------------

class Trip:
    """The New York trip of `year`: out on the last Thursday of October (10:15 from BER, 8 h 40),
    back on the Friday of the week after (17:55 from EWR, 7 h 40, landing Saturday morning)."""

    def __init__(self, year):
        oct31 = date(year, 10, 31)
        self.dep_date = oct31 - timedelta(days=(oct31.weekday() - 3) % 7)
        self.back_date = self.dep_date + timedelta(days=8)
        self.land_date = self.dep_date + timedelta(days=9)
        self.dep_t = wall(BERLIN, self.dep_date, 10 * 60 + 15)
        self.land_t = self.dep_t + (8 * 60 + 40) * 60
        self.arrive_t = self.land_t + 7 * 60  # the phone comes on: utc_offset
        self.back_dep_t = wall(NEW_YORK, self.back_date, 17 * 60 + 55)
        self.back_land_t = self.back_dep_t + (7 * 60 + 40) * 60
        self.home_t = self.back_land_t + 8 * 60  # the phone comes on in Berlin
        # New York's own offset changes while she is there (the phone reports them).
        self.ny_changes = transitions(NEW_YORK, self.arrive_t, self.home_t)


def christmas_break(year):
    """From the Monday of the week of 21 December to 1 January."""
    d = date(year, 12, 21)
    return d - timedelta(days=d.weekday()), date(year + 1, 1, 1)


# ---------------------------------------------------------------------------------------------
# The life
# ---------------------------------------------------------------------------------------------

class Event:
    def __init__(self, eid, title, start, end, zone, location, created):
        self.id, self.title, self.start, self.end = eid, title, start, end
        self.zone, self.location, self.created = zone, location, created
        self.cancelled = None

    def data(self):
        e = {"id": self.id, "title": self.title, "start": fmt_in(self.start, self.zone),
             "end": fmt_in(self.end, self.zone)}
        if self.location:
            e["location"] = self.location
        return e


class Night:
    def __init__(self, start, end, missing, sync):
        self.start, self.end, self.missing, self.sync = start, end, missing, sync
        self.minutes = (end - start) // 60


class Life:
    def __init__(self, start, days, seed):
        self.start, self.days, self.seed = start, days, seed
        self.end = start + timedelta(days=days)  # exclusive
        self.hist_start = start - timedelta(days=HISTORY_DAYS)
        years = range(self.hist_start.year - 1, self.end.year + 2)
        self.trips = [Trip(y) for y in years]
        self.breaks = [christmas_break(y) for y in years]
        self.holidays = {}
        for y in years:
            self.holidays.update(berlin_holidays(y))
        # The bad week: the second full week after the trip.
        self.bad_weeks = [t.land_date + timedelta(days=9) for t in self.trips]
        self.t0 = self.day_start(start)
        self.signals = []  # (t, rank, seq, kind, data, id prefix)
        self.seq = 0
        self.events = []
        self.history = []  # initial transactions: (t, merchant, mcc, amount, currency)
        self.counters = {}
        self.nights = {}
        self.kinds = {}
        self.fraud_used = 0
        self.returns = []  # (due date, merchant, mcc, amount): refunds to come
        self.booked = {}  # (title, day) of the events she added: the same one is not added twice

    # --- where she is ------------------------------------------------------------------------

    def zone_at(self, t):
        for trip in self.trips:
            if trip.arrive_t <= t < trip.home_t:
                return NEW_YORK
        return BERLIN

    def fmt(self, t):
        return fmt_in(t, self.zone_at(t))

    def local(self, t):
        return local_dt(t, self.zone_at(t))

    def local_date(self, t):
        return self.local(t).date()

    def trip_of(self, d):
        for trip in self.trips:
            if trip.dep_date <= d <= trip.land_date:
                return trip
        return None

    def day_zone(self, d):
        """The zone of her wall clock for the routine of day d (the morning's, on the day she
        flies out)."""
        trip = self.trip_of(d)
        if trip and trip.dep_date < d <= trip.back_date:
            return NEW_YORK
        return BERLIN

    def evening_zone(self, d):
        trip = self.trip_of(d)
        if trip and trip.dep_date <= d <= trip.back_date:
            return NEW_YORK
        return BERLIN

    def day_start(self, d):
        t = wall(BERLIN, d, 0)
        if self.zone_at(t) != BERLIN:
            t = wall(self.zone_at(t), d, 0)
        return t

    def kind(self, d):
        """work, free (weekend or public holiday), break (Christmas), travel_out, ny_work,
        ny_free, travel_back (a New York working day, flying home at night), return."""
        if d in self.kinds:
            return self.kinds[d]
        trip = self.trip_of(d)
        if trip:
            if d == trip.dep_date:
                k = "travel_out"
            elif d == trip.back_date:
                k = "travel_back"
            elif d == trip.land_date:
                k = "return"
            else:
                k = "ny_work" if d.weekday() < 5 else "ny_free"
        elif any(a <= d <= b for a, b in self.breaks):
            k = "break"
        elif d.weekday() >= 5 or d in self.holidays:
            k = "free"
        else:
            k = "work"
        self.kinds[d] = k
        return k

    def in_luebeck(self, d):
        """Christmas with her parents in Lübeck: 23 to 27 December."""
        return self.in_break(d) and date(d.year, 12, 23) <= d <= date(d.year, 12, 27)

    def in_break(self, d):
        return any(a <= d <= b for a, b in self.breaks)

    def colleagues_work(self, d):
        """Her colleagues in Berlin have a working day (some of them work in the break)."""
        return d.weekday() < 5 and d not in self.holidays

    def bad(self, d):
        for monday in self.bad_weeks:
            if monday - timedelta(days=1) <= d <= monday + timedelta(days=4):
                return True
        return False

    def quiet(self, t):
        x = self.local(t)
        minute = x.hour * 60 + x.minute
        return minute >= 22 * 60 or minute < 7 * 60

    def next_unquiet(self, t, r):
        """t, or the end of quiet hours after it plus a few minutes."""
        if not self.quiet(t):
            return t
        x = self.local(t)
        d = x.date() if x.hour < 7 else x.date() + timedelta(days=1)
        return wall(self.zone_at(t), d, 7 * 60 + r.between(2, 40), r.between(0, 59))

    def rng(self, d, purpose):
        return Rng(stream_seed(self.seed, d.isoformat(), purpose))

    def count(self, name):
        n = self.counters.get(name, 0) + 1
        self.counters[name] = n
        return n

    def thread(self, slug):
        return "th-%s-%04d" % (slug, self.count("thread"))

    # --- emitting ----------------------------------------------------------------------------

    def emit(self, t, kind, data, prefix=None):
        self.signals.append((t, RANK[kind], self.seq, kind, data, prefix))
        self.seq += 1

    def mail(self, t, thread, sender, subject, body, chat=False, received=None):
        """A message heard at t (received by the server at `received`, default t)."""
        data = {"id": None, "thread_id": thread, "sender": sender, "subject": subject,
                "body": body, "received_at": self.fmt(received if received is not None else t)}
        self.emit(t, "message", data, "c" if chat else "m")

    def chat(self, t, channel, sender, text):
        self.mail(t, channel, sender, "", text, chat=True)

    def spend(self, t, merchant, mcc, amount, currency="EUR", delay=None, r=None):
        """A card or account transaction at t, heard `delay` seconds later."""
        self.last_amount = amount
        if t < self.t0:
            self.history.append((t, merchant, mcc, amount, currency))
            return
        data = {"id": None, "merchant": merchant, "amount_minor": amount, "currency": currency,
                "time": self.fmt(t)}
        if mcc is not None:
            data["mcc"] = "%04d" % mcc
        if delay is None:
            delay = r.between(2, 75) if r else 20
        self.emit(t + delay, "transaction", data, "tx")

    def event(self, created, slug, title, start, end, zone, location=None, day=None):
        d = day or local_dt(start, zone).date()
        # Numbered per slug and day, so an id does not depend on how many days are written.
        key = "%s-%s" % (slug, d.strftime("%Y%m%d"))
        eid = "ev-%s-%d" % (key, self.count("event " + key))
        e = Event(eid, title, start, end, zone, location, created)
        self.events.append(e)
        return e

    # --- nights and the watch ---------------------------------------------------------------

    def night(self, m):
        """The night before the morning of date m."""
        if m in self.nights:
            return self.nights[m]
        r = self.rng(m, "night")
        e = m - timedelta(days=1)
        km, ke = self.kind(m), self.kind(e)
        trip_m, trip_e = self.trip_of(m), self.trip_of(e)
        zb, zw = self.evening_zone(e), self.day_zone(m)
        missing = False
        if trip_m and m == trip_m.land_date:
            # The night flight: a short sleep over the Atlantic, synced after landing.
            start = trip_m.back_dep_t + r.between(150, 175) * 60
            end = start + r.between(170, 220) * 60
            night = Night(start, end, False, trip_m.home_t + r.between(180, 900))
            self.nights[m] = night
            return night
        # Bedtime (minutes after the evening's midnight).
        if trip_e and e == trip_e.dep_date:
            bed = r.between(21 * 60 + 5, 21 * 60 + 50)
        elif trip_e and e == trip_e.land_date:
            bed = r.between(21 * 60, 21 * 60 + 40)
        elif trip_e and e == trip_e.dep_date + timedelta(days=1):
            bed = r.between(21 * 60 + 40, 22 * 60 + 25)
        elif e.month == 12 and e.day == 31:
            bed = r.between(24 * 60 + 35, 25 * 60 + 20)
        elif self.bad(m) and km == "work":
            bed = r.between(23 * 60 + 50, 25 * 60 + 5)
        elif km in ("work", "ny_work", "travel_back", "travel_out"):
            bed = r.between(22 * 60 + 35, 23 * 60 + 40)
            if km == "travel_out":
                bed = r.between(22 * 60 + 10, 22 * 60 + 50)
            elif r.chance(12):
                bed += r.between(40, 100)
        else:
            bed = r.between(23 * 60 + 5, 24 * 60 + 40)
        # Waking (minutes after the morning's midnight).
        k_since = (m - trip_m.dep_date).days if trip_m else 0
        if km == "travel_out":
            wake = r.between(5 * 60 + 5, 5 * 60 + 25)
        elif km in ("ny_work", "ny_free", "travel_back"):
            wake = [0, r.between(255, 300), r.between(290, 335), r.between(330, 370)][
                min(k_since, 3)] if k_since <= 3 else r.between(365, 405)
            if km == "ny_free" and k_since > 2:
                wake += r.between(25, 60)
        elif self.bad(m) and km == "work":
            wake = r.between(5 * 60 + 35, 6 * 60 + 10)
        elif km == "work":
            wake = r.between(6 * 60, 6 * 60 + 30) if m.weekday() in (0, 2, 4) \
                else r.between(6 * 60 + 20, 6 * 60 + 55)
        else:
            wake = r.between(7 * 60 + 5, 8 * 60 + 40)
        if not self.bad(m) and not trip_m and r.chance(9):
            if r.chance(50):
                wake = min(wake, r.between(4 * 60 + 50, 5 * 60 + 30))  # Emil is up early
            else:
                bed += r.between(70, 130)  # a late night
        start = wall(zb, e, bed)
        end = wall(zw, m, wake)
        if end - start < 3 * 3600:
            end = start + 3 * 3600 + r.between(0, 40) * 60
        if not trip_m and not trip_e and not self.bad(m) and r.chance(4):
            missing = True  # the watch spent the night on its charger
        sync = end + r.between(100, 1100)
        night = Night(start, end, missing, sync)
        self.nights[m] = night
        return night

    def wellness_day(self, d):
        """HRV multiplier, resting-HR offset and stress windows of day d."""
        r = self.rng(d, "wellness")
        k = self.kind(d)
        mult = 1.0 + (r.below(13) - 6) / 100.0
        rhr_add = (r.below(5) - 2) * 1.0
        night = self.night(d)
        if not night.missing:
            short = max(0, 450 - night.minutes)
            mult -= short / 450.0 * 0.35
            rhr_add += short / 90.0
        windows = []
        zone = self.day_zone(d)

        def window(start_min, rise_min, fall_min, drop, rise):
            a = wall(zone, d, start_min)
            windows.append((a, a + rise_min * 60, a + (rise_min + fall_min) * 60, drop, rise))

        trip = self.trip_of(d)
        if trip:
            k_since = (d - trip.dep_date).days
            if k == "travel_out":
                mult -= 0.08
                rhr_add += 3
            elif k == "return":
                mult -= 0.2
                rhr_add += 5
            elif k_since <= 3:
                mult -= [0, 0.18, 0.12, 0.06][k_since]
                rhr_add += [0, 5, 3, 2][k_since]
            if k in ("ny_work", "travel_back") and r.chance(35):
                window(r.between(10 * 60, 14 * 60), r.between(40, 80), r.between(50, 90),
                       r.uniform(0.2, 0.35), r.between(4, 8))
        elif self.bad(d):
            mult -= 0.14
            rhr_add += 4
            if k == "work":
                window(r.between(13 * 60 + 15, 14 * 60 + 15), r.between(50, 80),
                       r.between(60, 100), r.uniform(0.35, 0.5), r.between(8, 12))
                if r.chance(50):
                    window(r.between(8 * 60 + 30, 10 * 60), r.between(30, 50), r.between(30, 60),
                           r.uniform(0.15, 0.3), r.between(3, 7))
        elif k == "work":
            if r.chance(35):
                window(r.between(13 * 60 + 30, 14 * 60 + 45), r.between(45, 90),
                       r.between(50, 90), r.uniform(0.22, 0.45), r.between(5, 10))
            if r.chance(10):
                window(r.between(8 * 60 + 30, 10 * 60 + 30), r.between(25, 45),
                       r.between(30, 60), r.uniform(0.15, 0.3), r.between(3, 6))
        elif k == "break":
            mult += 0.04
            rhr_add -= 1
        elif r.chance(8):
            window(r.between(16 * 60, 18 * 60), r.between(20, 40), r.between(30, 50),
                   r.uniform(0.1, 0.2), r.between(2, 5))
        return mult, rhr_add, windows

    def readings(self, d):
        """A reading every 5 minutes from waking on day d to going to bed, while worn."""
        r = self.rng(d, "readings")
        night, next_night = self.night(d), self.night(d + timedelta(days=1))
        wake, bed = night.end, next_night.start
        k = self.kind(d)
        zone = self.day_zone(d)
        gaps = []
        first = wake + r.between(180, 480)
        if night.missing:
            first = wake + r.between(25, 60) * 60  # the watch comes off the charger
        elif k not in ("return", "travel_out"):
            a = wake + r.between(20, 45) * 60
            gaps.append((a, a + r.between(12, 22) * 60))  # shower
        if k == "work" and d.weekday() == 0 and not self.bad(d):
            gaps.append((wall(zone, d, 18 * 60 + 25), wall(zone, d, 19 * 60 + 35)))  # Pilates
        if k == "free" and d.weekday() == 5 and r.chance(35):
            a = wall(zone, d, r.between(9 * 60 + 40, 10 * 60 + 20))
            gaps.append((a, a + r.between(60, 80) * 60))  # swimming with Emil
        if k in ("work", "free", "break", "ny_work", "ny_free") and r.chance(30) \
                and not next_night.missing:
            a = wall(self.evening_zone(d), d, r.between(19 * 60 + 15, 21 * 60 + 30))
            gaps.append((a, a + r.between(35, 70) * 60))  # on the charger
        if next_night.missing:
            bed = bed - r.between(10, 40) * 60  # on the charger for the night
        mult, rhr_add, windows = self.wellness_day(d)
        hrv_base, rhr_base = 58.0 * mult, 57.0 + rhr_add
        hrv, rhr = None, None
        noise = 0.0
        t = first
        out = []
        while t < bed - 240:
            if any(a <= t < b for a, b in gaps):
                t += 300
                continue
            x = self.local(t)
            minute = x.hour * 60 + x.minute
            since_wake = (t - wake) // 60
            f_hrv = hrv_base
            f_rhr = rhr_base
            if since_wake < 120:
                f_hrv += 3.0
                f_rhr -= 1.0
            if 13 * 60 <= minute < 15 * 60 + 30:
                f_hrv -= 2.0
                f_rhr += 1.0
            if minute >= 20 * 60 or minute < 3 * 60:
                f_hrv += 2.5
            stress = 0.0
            for a, peak, b, drop, rise in windows:
                if a <= t < peak:
                    level = (t - a) / (peak - a)
                elif peak <= t < b:
                    level = (b - t) / (b - peak)
                else:
                    continue
                if level > stress:
                    stress = level
                    f_hrv_w, f_rhr_w = drop, rise
            if stress > 0:
                f_hrv *= 1.0 - stress * f_hrv_w
                f_rhr += stress * f_rhr_w
            noise = 0.8 * noise + r.uniform(-1.2, 1.2)
            if hrv is None:
                hrv, rhr = f_hrv, f_rhr
            hrv = hrv + 0.4 * (f_hrv - hrv) + noise * 0.6
            rhr = rhr + 0.3 * (f_rhr - rhr) + r.uniform(-0.35, 0.35)
            data = {"hrv_ms": min(160, max(12, int(round(hrv)))),
                    "resting_hr_bpm": min(110, max(40, int(round(rhr))))}
            if not out and not night.missing:
                data["sleep_minutes"] = night.minutes
            out.append((t, data))
            t += 300
        return out

    # --- calendar ----------------------------------------------------------------------------

    def weekly(self, d):
        """The recurring instances of date d: (slug, title, start minute, minutes, location)."""
        k = self.kind(d)
        iso_week = d.isocalendar()[1]
        out = []
        if k == "work":
            wd = d.weekday()
            if wd in (0, 2, 4):
                out.append(("kita-dropoff", "Kita drop-off (Emil)", 7 * 60 + 45, 30, KITA_ADDR))
            out.append(("standup", "Payments squad stand-up", 9 * 60, 15, None))
            if wd == 0:
                out.append(("1on1-markus", "1:1 Markus / Lena", 10 * 60, 45, HQ_HAVEL))
                out.append(("pilates", "Pilates", 18 * 60 + 30, 60, "Pilates Loft Mitte, Torstraße 140"))
            if wd == 1:
                out.append(("guild", "Payments guild", 11 * 60 + 30, 60, HQ_SPREE))
                if iso_week % 2 == 0:
                    out.append(("1on1-sofia", "1:1 Sofia / Lena", 14 * 60, 30, HQ_ODER))
            if wd == 2:
                if iso_week % 2 == 0:
                    out.append(("sprint-planning", "Sprint planning", 10 * 60, 90, HQ_SPREE))
                else:
                    out.append(("1on1-david", "1:1 David / Lena", 15 * 60, 30, None))
            if wd == 3:
                out.append(("arch-sync", "Architecture sync", 13 * 60, 60, HQ_SPREE))
                out.append(("1on1-priya", "1:1 Priya / Lena", 16 * 60, 30, None))
                if iso_week % 2 == 1:
                    out.append(("1on1-tim", "1:1 Tim / Lena", 10 * 60, 30, HQ_HAVEL))
            if wd == 4 and iso_week % 2 == 1:
                out.append(("retro", "Sprint retro", 15 * 60, 60, HQ_SPREE))
        elif k == "free" and d.weekday() == 5 and d not in self.holidays:
            out.append(("kinderturnen", "Kinderturnen (Emil)", 10 * 60, 60,
                        "TSV Prenzlauer Berg, Turnhalle Wichertstraße"))
        return out

    def recurring(self, d):
        """The calendar writes out each week's recurring meetings on the Sunday before, 18:00
        Berlin time (one signal each, seconds apart)."""
        if d.weekday() != 6:
            return
        r = self.rng(d, "recurring")
        sync = wall(BERLIN, d, 18 * 60)
        n = 0
        for i in range(1, 8):
            day = d + timedelta(days=i)
            for slug, title, minute, length, location in self.weekly(day):
                a = wall(BERLIN, day, minute)
                e = self.event(sync + n * 3, slug, title, a, a + length * 60, BERLIN, location, day)
                n += 1
                # Now and then one is called off (the other side is ill or travelling).
                if slug.startswith(("1on1", "guild", "arch-sync", "retro")) and r.chance(8):
                    e.cancelled = max(e.created + 600, a - r.between(40, 60 * 30) * 60)

    def adhoc(self, d):
        """Events she adds during day d for the coming days; some are later cancelled."""
        r = self.rng(d, "calendar")
        k = self.kind(d)
        zone = self.day_zone(d)
        if k not in ("work", "free", "break", "ny_work", "ny_free"):
            return
        n = r.between(1, 3) if k == "work" else r.between(0, 1)
        for _ in range(n):
            created = wall(zone, d, r.between(8 * 60, 21 * 60 + 30), r.between(0, 59))
            ahead = r.between(0, 9) if k == "work" else r.between(1, 10)
            day = d + timedelta(days=ahead)
            dk = self.kind(day)
            if dk in ("travel_out", "travel_back", "return", "ny_work", "ny_free") \
                    or self.in_luebeck(day):
                continue
            choice = r.below(100)
            if dk == "work":
                if choice < 45:
                    title, slug, length, loc = r.pick([
                        ("Design review: %s" % r.pick(PROJECTS), "design-review", 60, r.pick(HQ_ROOMS)),
                        ("Incident review: %s" % r.pick(PROJECTS), "incident-review", 45, r.pick(HQ_ROOMS)),
                        ("Coffee with %s" % first_name(r.pick([SOFIA, DAVID, TIM, PRIYA])), "coffee", 30, None),
                        ("%s planning" % cap(r.pick(PROJECTS)), "planning", 60, r.pick(HQ_ROOMS)),
                        ("Budget planning 2027 with Markus", "budget", 60, HQ_HAVEL),
                        ("Kestrel KYC check-in", "kestrel", 30, None),
                        ("LumenPay ops sync", "lumenpay-sync", 45, None),
                        ("Focus time", "focus", 90, None),
                    ])
                    # Now and then on top of a weekly meeting.
                    start_min = r.pick([10 * 60, 11 * 60 + 30, 13 * 60, 16 * 60]) if r.chance(30) \
                        else r.between(19, 33) * 30
                elif choice < 60:
                    cand = r.pick(CANDIDATES)
                    title, slug, length, loc = ("Interview: %s (Senior Backend Engineer)" % cand,
                                                "interview", 60, HQ_ELBE)
                    start_min = r.pick([10 * 60, 11 * 60, 14 * 60, 15 * 60])
                elif choice < 75:
                    title, slug, length, loc = ("Pick up Emil from Kita", "kita-pickup", 30, KITA_ADDR)
                    start_min = 16 * 60 + 30
                elif choice < 85:
                    title, slug, length, loc = r.pick([
                        ("Dentist: Dr. Yilmaz (check-up)", "dentist", 40,
                         "Zahnarztpraxis Dr. Yilmaz, Schönhauser Allee 58"),
                        ("Kinderarzt: Emil (U-Untersuchung)", "kinderarzt", 45,
                         "Kinderarztpraxis Dr. Albers, Greifswalder Str. 9"),
                        ("Physiotherapie", "physio", 30, "Physio Prenzlauer Berg, Danziger Str. 31"),
                        ("Bürgeramt: Reisepass abholen", "buergeramt", 30, "Bürgeramt Pankow, Fröbelstraße 17"),
                    ])
                    start_min = r.pick([8 * 60, 8 * 60 + 15, 17 * 60 + 45, 12 * 60 + 30])
                else:
                    title, slug, length, loc = r.pick([
                        ("Elternabend Kita Sonnenblume", "elternabend", 90, KITA_ADDR),
                        ("Dinner with Nele & Paul", "dinner", 150, r.pick(DINING)),
                        ("Yoga with Katrin", "yoga", 75, "Yoga Loft Kollwitzkiez"),
                        ("Theatre: Volksbühne", "theatre", 150, "Volksbühne, Linienstraße 227"),
                    ])
                    start_min = r.pick([19 * 60, 19 * 60 + 30, 20 * 60])
            else:
                title, slug, length, loc, times = r.pick([
                    ("Kindergeburtstag bei %s" % r.pick(["Mila", "Oskar", "Frieda", "Anton", "Lotta"]),
                     "birthday", 150, "Spielplatz Kollwitzplatz", [14 * 60 + 30, 15 * 60]),
                    ("Brunch with Nele & Paul", "brunch", 120, r.pick(DINING), [10 * 60, 11 * 60]),
                    ("Haircut", "haircut", 45, "Salon Schnittpunkt, Kastanienallee 40",
                     [10 * 60, 11 * 60, 14 * 60 + 30]),
                    ("Zoo with Emil", "zoo", 180, "Zoo Berlin", [10 * 60, 13 * 60 + 30]),
                    ("Flohmarkt Mauerpark", "flohmarkt", 120, "Mauerpark", [10 * 60, 11 * 60]),
                    ("Dinner with Katrin", "dinner", 150, r.pick(DINING), [18 * 60 + 30, 19 * 60]),
                ])
                start_min = r.pick(times)
                if dk == "break" and r.chance(40):
                    title, slug, length = "Weihnachtsmarkt with Emil", "weihnachtsmarkt", 150
                    start_min = r.pick([15 * 60, 16 * 60])
            a = wall(BERLIN, day, start_min)
            if a <= created + 3600 or (title, day) in self.booked:
                continue
            self.booked[(title, day)] = True
            e = self.event(created, slug, title, a, a + length * 60, BERLIN, loc, day)
            if r.chance(20):
                e.cancelled = created + (a - created) * r.between(20, 90) // 100
                if r.chance(55):
                    # Moved to another day of the same kind (a workday's to a workday, a
                    # weekend's to the next weekend), else dropped.
                    days = r.pick([1, 1, 2, 7])
                    if self.kind(day + timedelta(days=days)) != dk:
                        days = 7
                    target = day + timedelta(days=days)
                    if self.kind(target) == dk:
                        b = wall(BERLIN, target, start_min + r.pick([0, 0, 60, -60]))
                        self.event(e.cancelled + r.between(30, 240), slug + "-r", title, b,
                                   b + length * 60, BERLIN, loc, target)

    def special_events(self):
        """The trip, the out-of-office and the Christmas visit, booked weeks ahead."""
        for trip in self.trips:
            booked = wall(BERLIN, trip.dep_date - timedelta(days=24), 20 * 60 + 14)
            self.event(booked, "flight", "Flight UA 963 BER → EWR", trip.dep_t, trip.land_t,
                       BERLIN, "Berlin Brandenburg Airport, Terminal 1")
            hotel = "The Hoxton, 97 Wythe Ave, Brooklyn"
            self.event(booked + 60, "hotel", "Hotel check-in: The Hoxton, Williamsburg",
                       wall(NEW_YORK, trip.dep_date, 15 * 60 + 30), wall(NEW_YORK, trip.dep_date, 16 * 60),
                       NEW_YORK, hotel)
            self.event(booked + 90, "hotel", "Hotel check-out: The Hoxton, Williamsburg",
                       wall(NEW_YORK, trip.back_date, 8 * 60 + 30), wall(NEW_YORK, trip.back_date, 9 * 60),
                       NEW_YORK, hotel)
            self.event(booked + 120, "flight", "Flight UA 962 EWR → BER", trip.back_dep_t,
                       trip.back_land_t, NEW_YORK, "Newark Liberty International Airport, Terminal C")
            plan = wall(BERLIN, trip.dep_date - timedelta(days=14), 11 * 60 + 2)
            d = trip.dep_date + timedelta(days=1)
            n = 0
            while d < trip.back_date + timedelta(days=1):
                if d.weekday() < 5:
                    for title, minute, length, loc in [
                            ("Halden US: payments roadmap workshop", 9 * 60 + 30, 180, NY_OFFICE),
                            ("Northwind Bank: integration review", 14 * 60, 90, NY_CLIENT),
                            ("Team lunch with the NYC office", 12 * 60 + 30, 60, "Eataly Flatiron"),
                            ("1:1 Rachel / Lena", 16 * 60, 30, NY_OFFICE)][n % 3:n % 3 + 2]:
                        a = wall(NEW_YORK, d, minute)
                        self.event(plan + n * 5, "nyc", title, a, a + length * 60, NEW_YORK, loc)
                        n += 1
                d += timedelta(days=1)
        for first, last in self.breaks:
            booked = wall(BERLIN, first - timedelta(days=40), 21 * 60 + 7)
            self.event(booked, "ooo", "Out of office: Christmas break", wall(BERLIN, first, 0),
                       wall(BERLIN, last + timedelta(days=1), 0), BERLIN)
            dep = date(first.year, 12, 23)
            self.event(booked + 60, "train", "ICE 1703 Berlin Hbf → Lübeck Hbf",
                       wall(BERLIN, dep, 10 * 60 + 34), wall(BERLIN, dep, 13 * 60 + 2), BERLIN,
                       "Berlin Hauptbahnhof")
            self.event(booked + 120, "luebeck", "Weihnachten bei Oma & Opa in Lübeck",
                       wall(BERLIN, dep, 14 * 60), wall(BERLIN, dep, (4 * 24 + 11) * 60), BERLIN,
                       "Hartmann, Moltkestraße 8, Lübeck")
            self.event(booked + 180, "train", "ICE 1708 Lübeck Hbf → Berlin Hbf",
                       wall(BERLIN, dep, (4 * 24 + 11) * 60 + 58),
                       wall(BERLIN, dep, (4 * 24 + 14) * 60 + 31), BERLIN, "Lübeck Hauptbahnhof")
            party = date(first.year, 12, 11)
            party -= timedelta(days=(party.weekday() - 4) % 7)
            self.invites_fixed.append((party, "Halden Weihnachtsfeier", 18 * 60 + 30, 300,
                                       "Holzmarkt 25, Berlin", PEOPLE))

    def invitations(self, d):
        """Invitations arriving on day d and her answers (minutes to a day later, or none)."""
        r = self.rng(d, "invitations")
        k = self.kind(d)
        if not self.colleagues_work(d) and k not in ("ny_work", "travel_back"):
            if r.chance(85):
                return
        per_day = 0 if self.in_break(d) and not r.chance(10) else r.between(0, 2)
        if self.colleagues_work(d) and r.chance(20):
            per_day += 1
        made = []
        for fixed in self.invites_fixed:
            if fixed[0] - timedelta(days=20) == d:
                made.append(fixed)
        for _ in range(per_day):
            ahead = r.between(1, 9)
            day = d + timedelta(days=ahead)
            dk = self.kind(day)
            if dk in ("ny_work", "travel_back"):
                title, sender, minute, length, loc = r.pick([
                    ("Northwind Bank: settlement deep dive", ETHAN, 11 * 60, 60, NY_CLIENT),
                    ("Coffee with the Halden US sales team", RACHEL, 9 * 60, 30, NY_OFFICE),
                    ("Payments meetup NYC: talk rehearsal", RACHEL, 17 * 60 + 30, 60, NY_OFFICE)])
                made.append((day, title, minute, length, loc, sender, NEW_YORK))
                continue
            if dk not in ("work", "free"):
                continue
            if dk == "free":
                made.append((day, r.pick(["Laternenumzug Kollwitzkiez", "Spieleabend bei Nele",
                                          "Kinderkonzert Philharmonie", "Eislaufen mit den Kita-Eltern"]),
                             r.pick([11 * 60, 15 * 60, 17 * 60, 19 * 60]), 120,
                             r.pick(["Kollwitzplatz", "Nele's, Stargarder Str. 12",
                                     "Philharmonie Berlin", "Eisstadion Wedding"]),
                             r.pick([NELE, r.pick(PARENTS), KATRIN]), BERLIN))
                continue
            sender = r.pick([MARKUS, PRIYA, SOFIA, DAVID, ANNA, CLAIRE, NIKLAS, AMELIE, TIM, PEOPLE])
            title = {
                MARKUS: r.pick(["Leadership sync: Q1 priorities", "Go/no-go: %s" % r.pick(PROJECTS),
                                "Skip-level with the payments team", "Budget review 2027"]),
                PRIYA: r.pick(["Roadmap review: %s" % r.pick(PROJECTS), "Customer call: Northwind Bank",
                               "Product/Eng sync", "Q1 planning workshop"]),
                SOFIA: r.pick(["Postmortem review: %s" % r.pick(PROJECTS), "On-call handover",
                               "Game day: settlement failover"]),
                DAVID: r.pick(["Pairing: %s" % r.pick(PROJECTS), "Tech talk: idempotency keys"]),
                ANNA: r.pick(["Engineering all-hands", "CTO office hours", "Architecture board"]),
                CLAIRE: r.pick(["LumenPay x Halden weekly ops", "LumenPay quarterly business review",
                                "LumenPay: incident follow-up"]),
                NIKLAS: r.pick(["Kestrel KYC live demo: automated UBO checks", "Kestrel KYC pricing call"]),
                AMELIE: r.pick(["Kestrel KYC integration check-in", "Kestrel KYC: sandbox walkthrough"]),
                TIM: r.pick(["HSM key ceremony", "Certificate inventory review"]),
                PEOPLE: r.pick(["Interview training", "Performance review calibration",
                                "Benefits info session"]),
            }[sender]
            minute = r.between(18, 33) * 30
            length = r.pick([30, 30, 45, 60, 60, 90])
            loc = r.pick(HQ_ROOMS) if sender not in (CLAIRE, NIKLAS, AMELIE) else \
                r.pick([None, "LumenPay Berlin, Schlesische Straße 26"])
            made.append((day, title, minute, length, loc, sender, BERLIN))
        for item in made:
            if len(item) == 6:
                day, title, minute, length, loc, sender = item
                zone = BERLIN
            else:
                day, title, minute, length, loc, sender, zone = item
            if sender in (CLAIRE, NIKLAS, AMELIE, ETHAN) or zone == NEW_YORK:
                sender_zone = zone
            else:
                sender_zone = BERLIN
            if sender in (CLAIRE,) and r.chance(20):
                arrive = wall(sender_zone, d, r.between(21 * 60 + 40, 23 * 60), r.between(0, 59))
            elif zone == BERLIN and not self.colleagues_work(d):
                arrive = wall(sender_zone, d, r.between(10 * 60, 20 * 60), r.between(0, 59))
            else:
                arrive = wall(sender_zone, d, r.between(8 * 60 + 30, 18 * 60), r.between(0, 59))
            a = wall(zone, day, minute)
            self.invite(r, arrive, title, sender, a, a + length * 60, zone, loc, day)

    def invite(self, r, arrive, title, sender, start, end, zone, loc, day):
        slug = "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in title.lower().split(":")[0])[:24].strip("-")
        while "--" in slug:
            slug = slug.replace("--", "-")
        key = "%s-%s" % (day.strftime("%Y%m%d"), slug)
        inv_id = "inv-%s-%d" % (key, self.count("invitation " + key))
        people = [address(sender), ME] + [address(p) for p in r.sample(
            [PRIYA, SOFIA, DAVID, TIM, ANNA, MARKUS], r.between(0, 4)) if address(p) != address(sender)]
        data = {"id": inv_id, "from": sender, "title": title, "start": fmt_in(start, zone),
                "end": fmt_in(end, zone), "attendees": people}
        if loc:
            data["location"] = loc
        self.emit(arrive, "invitation", data)
        name = sender.split("<")[0].strip()
        self.mail(arrive - r.between(3, 40), self.thread("invite"),
                  "%s (Google Calendar) <calendar-notification@google.com>" % name,
                  "Invitation: %s @ %s" % (title, when_text(start, end, zone)),
                  "%s has invited you to %s.\n\n%s\nWhen: %s\n%sGuests: %s\n\nGoing? Yes - Maybe - No"
                  % (name, "a meeting" if "@" in sender else "an event", title,
                     when_text(start, end, zone), ("Where: %s\n" % loc) if loc else "",
                     ", ".join(people)))
        # The question is asked at once, or held until quiet hours end.
        asked = self.next_unquiet(arrive, r)
        if r.chance(20):
            return  # never answered
        bucket = r.below(100)
        if bucket < 45:
            delay = r.between(5, 60) * 60
        elif bucket < 75:
            delay = r.between(60, 360) * 60
        else:
            x = self.local(asked)
            next_morning = wall(self.zone_at(asked), x.date() + timedelta(days=1),
                                r.between(7 * 60 + 15, 10 * 60 + 30))
            delay = next_morning - asked
        answer_at = self.next_unquiet(asked + max(delay, 16 * 60) + r.between(0, 59), r)
        if answer_at > start - 10 * 60 or answer_at > asked + 23 * 3600:
            return
        data = {"agent": "calendar", "tool": "schedule_event", "signal": "invitation:" + inv_id,
                "confirm": r.chance(70)}
        self.emit(answer_at, "answer", data)
        if r.chance(4):
            self.emit(answer_at + r.between(1, 6), "answer", dict(data))  # a double tap

    # --- money -------------------------------------------------------------------------------

    def money(self, d):
        r = self.rng(d, "money")
        k = self.kind(d)
        wd = d.weekday()
        zone = self.day_zone(d)
        history = d < self.start

        def at(minute_lo, minute_hi, z=None):
            return wall(z or zone, d, r.between(minute_lo, minute_hi), r.between(0, 59))

        def card(t, merchant, mcc, amount, currency="EUR"):
            self.spend(t, merchant, mcc, amount, currency, r=r)
            return t

        # Bills, salary and child benefit, wherever she is.
        for merchant, mcc, dom, amount, debit in MONTHLY:
            due = date(d.year, d.month, dom)
            if debit:
                due = business_day(due, self.holidays)
            if d == due:
                hour = 5 if debit else 3
                t = wall(BERLIN, d, hour * 60 + r.between(5, 55), r.between(0, 59))
                self.spend(t, merchant, mcc, amount, delay=r.between(60, 1500))
        if d == last_business_day(d.year, d.month, self.holidays):
            t = wall(BERLIN, d, 6 * 60 + r.between(0, 50))
            self.spend(t, SALARY, None, -(541800 + r.between(-900, 900)), delay=r.between(60, 900))
        if d == business_day(date(d.year, d.month, 10), self.holidays):
            t = wall(BERLIN, d, 7 * 60 + r.between(0, 50))
            self.spend(t, KINDERGELD, None, -25900, delay=r.between(60, 900))
        # Refunds of returns, due today.
        for due, merchant, mcc, amount in [x for x in self.returns if x[0] == d]:
            self.returns.remove((due, merchant, mcc, amount))
            t = wall(BERLIN, d, r.between(9 * 60, 15 * 60))
            self.spend(t, merchant, mcc, -amount, delay=r.between(10, 600))
        trip = self.trip_of(d)
        if trip and d > trip.dep_date and d <= trip.back_date:
            self.money_ny(d, r, trip)
            return
        if trip and d == trip.dep_date:
            card(at(7 * 60 + 40, 8 * 60 + 10, BERLIN), "Taxi Berlin 4421", 4121, r.between(3400, 4600))
            card(at(8 * 60 + 40, 9 * 60 + 30, BERLIN), "Coffee Fellows BER Terminal 1", 5814, r.between(590, 990))
            card(at(10 * 60 + 50, 12 * 60, BERLIN), "United Wi-Fi", 4899, 2199, "USD")
            card(at(14 * 60 + 40, 15 * 60 + 20, NEW_YORK), "NYC TAXI 7H42", 4121, r.between(7200, 9800), "USD")
            card(at(19 * 60, 20 * 60, NEW_YORK), r.pick(NY_FOOD[:6])[0], 5812, r.between(1800, 3400), "USD")
            return
        if self.in_luebeck(d):
            # In Lübeck (the trains on the 23rd and the 27th): only what is spent there.
            if d.day in (23, 27):
                card(at(11 * 60, 12 * 60 + 30, BERLIN) if d.day == 23 else at(12 * 60 + 10, 14 * 60),
                     "DB Fernverkehr Bordbistro", 5812, r.between(890, 2290))
            for m in r.sample(LUEBECK, r.between(1, 3) if d.day != 24 else r.between(0, 1)):
                lo = 14 * 60 if d.day == 23 else 9 * 60
                hi = 11 * 60 + 30 if d.day == 27 else 20 * 60
                card(at(lo, hi), m[0], m[1], r.between(m[2], m[3]))
            self.fraud(d, r)
            return
        if k == "return":
            card(at(8 * 60, 8 * 60 + 30), "Taxi Berlin 4421", 4121, r.between(3600, 4800))
            g = r.pick(GROCERS_BIG)
            card(at(11 * 60, 13 * 60), g[0], g[1], r.between(4800, 8900))
            return
        if k == "work":
            if wd in (0, 2, 4) and r.chance(40):
                card(at(8 * 60 + 18, 8 * 60 + 40), COFFEE[0], COFFEE[1], r.pick([390, 390, 420, 450]))
            roll = r.below(100)
            acc = 0
            for name, mcc, lo, hi, weight in LUNCH_PLACES:
                acc += weight
                if roll < acc:
                    card(at(12 * 60 + 5, 13 * 60 + 10), name, mcc, r.between(lo, hi))
                    break
            else:
                if roll < 95:
                    card(at(12 * 60 + 5, 13 * 60), r.pick(DINING), 5812, r.between(990, 1890))
            if wd in (1, 3) and r.chance(45):
                g = r.pick(GROCERS_SMALL)
                t = card(at(17 * 60 + 50, 18 * 60 + 40), g[0], g[1], r.between(1400, 3900))
                self.maybe_duplicate(d, r, t, g, history)
            if wd == 3 and not self.in_break(d):
                card(at(6 * 60, 6 * 60 + 30), HELLOFRESH[0], HELLOFRESH[1], r.pick([6499, 6499, 6799]))
            if wd in (2, 4) and r.chance(18):
                m = r.pick(DELIVERY)
                card(at(19 * 60 + 20, 20 * 60 + 10), m[0], m[1], r.between(2200, 4100))
            if r.chance(4):
                card(at(7 * 60, 22 * 60), UBER[0], UBER[1], r.between(1150, 2450))
        elif k in ("free", "break"):
            if wd == 5 or (k == "break" and r.chance(30)):
                if r.chance(88):
                    g = r.pick(GROCERS_BIG)
                    t = card(at(9 * 60, 12 * 60 + 30), g[0], g[1], r.between(5200, 9800))
                    self.maybe_duplicate(d, r, t, g, history)
            if r.chance(55 if k == "free" else 75):
                card(at(11 * 60, 14 * 60 + 30), r.pick(DINING), 5814, r.between(2400, 5200))
            if r.chance(35 if k == "free" else 60):
                m = r.pick(LEISURE)
                card(at(10 * 60, 17 * 60), m[0], m[1], r.between(m[2], m[3]))
            if wd == 5 and r.chance(40):
                card(at(19 * 60 + 30, 21 * 60), r.pick(DINING), 5812, r.between(4800, 9800))
            if wd == 6 and r.chance(20):
                m = r.pick(DELIVERY)
                card(at(18 * 60 + 30, 19 * 60 + 50), m[0], m[1], r.between(2600, 4600))
        if k in ("free", "break") and r.chance(60):
            card(at(8 * 60, 10 * 60 + 30), r.pick(["Zeit fuer Brot Alte Schoenhauser", "Baeckerei Siebert",
                                                  "Soluna Brot und Oel"]), 5462, r.between(450, 1450))
        if k == "work" and r.chance(20):
            card(at(15 * 60, 16 * 60 + 30), r.pick(["Selecta Automat Halden HQ", "SumUp *Kiosk am Rosenthaler Platz"]),
                 5814, r.between(180, 450))
        if r.chance(12):
            card(at(18 * 60, 22 * 60), r.pick(["Spaeti Kastanienallee", "Kiosk Eberswalder Str"]), 5499,
                 r.between(250, 1400))
        if r.chance(6):
            card(at(10 * 60, 18 * 60), "Apotheke am Kollwitzplatz", 5912, r.between(495, 2890))
        # Every day at home: drugstore, Amazon, shops; Christmas shopping in December.
        if r.chance(7):
            card(at(10 * 60, 19 * 60), DM[0], DM[1], r.between(800, 3400))
        # Online orders in the evening (until 22:30), some sent back: the refund is due a few
        # days later, on a business day. (merchant, %, from, amounts, % sent back, days)
        for merchant, percent, start, amounts, back_percent, back_days in (
                (AMAZON, 11, 19 * 60, (899, 4990), 20, (6, 14)),
                (ZALANDO, 4, 20 * 60, (3995, 11995), 55, (7, 16))):
            if r.chance(percent):
                card(at(start, 22 * 60 + 30), merchant[0], merchant[1], r.between(*amounts))
                if r.chance(back_percent):
                    due = business_day(d + timedelta(days=r.between(*back_days)), self.holidays)
                    self.returns.append((due, merchant[0], merchant[1], self.last_amount))
        if r.chance(22 if k == "work" else 40):
            m = r.pick(SHOPS)
            card(at(10 * 60, 19 * 60), m[0], m[1], r.between(m[2], m[3]))
        if d.month == 12 and 1 <= d.day <= 23 and r.chance(30 if k == "work" else 60):
            m = r.pick(XMAS_SHOPS)
            card(at(11 * 60, 20 * 60), m[0], m[1], r.between(m[2], m[3]))
        if not history:
            self.fraud(d, r)

    def maybe_duplicate(self, d, r, t, merchant, history):
        """A terminal retry: the same charge again 1-4 minutes later (on the month's fraud
        days only)."""
        if history or d not in self.month_fraud_days(d.year, d.month):
            return
        if self.fraud_kind(d) != "duplicate" or d in self.fraud_done:
            return
        self.fraud_done.append(d)
        self.spend(t + r.between(60, 240), merchant[0], merchant[1], self.last_amount, r=r)

    def fraud_kind(self, d):
        return "duplicate" if self.rng(d, "fraud-kind").chance(45) else "large"

    def month_fraud_days(self, year, month):
        key = (year, month)
        if key not in self.fraud_days:
            r = Rng(stream_seed(self.seed, "%04d-%02d" % key, "fraud"))
            n = 2 if r.chance(60) else 1
            days = []
            while len(days) < n:
                day = date(year, month, r.between(1, 28))
                if day not in days:
                    days.append(day)
            self.fraud_days[key] = days
        return self.fraud_days[key]

    def fraud(self, d, r):
        if d < self.start or d not in self.month_fraud_days(d.year, d.month) or d in self.fraud_done:
            return
        kind = self.fraud_kind(d)
        zone = self.day_zone(d)
        if kind == "duplicate":
            # No terminal retry happened at a shop today: a double Uber charge instead.
            t = wall(zone, d, r.between(8 * 60, 21 * 60), r.between(0, 59))
            amount = r.between(1150, 2650)
            self.spend(t, UBER[0], UBER[1], amount, r=r)
            self.spend(t + r.between(45, 200), UBER[0], UBER[1], amount, r=r)
            self.fraud_done.append(d)
            return
        merchant = self.fraud_merchant(r)
        minute = r.between(60, 300) if r.chance(60) else r.between(10 * 60, 20 * 60)
        t = wall(zone, d, minute, r.between(0, 59))
        amount = r.between(39900, 189900)
        # MCCs of categories she has a history in (shopping, entertainment): finance judges a
        # new merchant against its category, and an uncategorised one against nothing.
        self.spend(t, merchant, r.pick([5311, 5651, 5691, 5699, 5399, 7995]), amount, r=r)
        self.fraud_done.append(d)
        if t >= self.t0:
            self.mail(t + r.between(20, 90), "th-n26-fraud-%d" % self.count("fraud"), N26,
                      "Card payment of %s at %s" % (euro(amount), merchant),
                      "You paid %s at %s with your Mastercard ending 4417. This is your largest "
                      "card payment this month. Not you? Lock your card in the app." % (
                          euro(amount), merchant))

    def fraud_merchant(self, r):
        n = self.fraud_used
        self.fraud_used += 1
        if n < len(FRAUD_MERCHANTS):
            return FRAUD_MERCHANTS[n]
        syll = ["VEL", "TRA", "NOX", "QUI", "ZAR", "MIR", "LEX", "DOR", "KAN", "SUL"]
        return "ONLINESHOP* %s%s%s STORE" % (syll[n % 10], syll[(n // 10) % 10], syll[(n // 100) % 10])

    def money_ny(self, d, r, trip):
        k = self.kind(d)

        def at(lo, hi):
            return wall(NEW_YORK, d, r.between(lo, hi), r.between(0, 59))

        def card(t, merchant, mcc, amount):
            self.spend(t, merchant, mcc, amount, "USD", r=r)

        m = r.pick(NY_FOOD[:2] + NY_FOOD[9:])
        card(at(7 * 60 + 10, 8 * 60 + 40), m[0], m[1], r.between(m[2], m[3]))
        for _ in range(r.between(1, 3)):
            card(at(7 * 60 + 30, 21 * 60), "MTA*NYCT OMNY", 4111, 290)
        if k in ("ny_work", "travel_back"):
            m = r.pick(NY_FOOD)
            card(at(12 * 60, 13 * 60 + 20), m[0], m[1], r.between(m[2], m[3]))
            if r.chance(45):
                card(at(19 * 60, 21 * 60 + 30), r.pick(NY_DINNER), 5812, r.between(6800, 18900))
        else:
            for _ in range(r.between(1, 2)):
                m = r.pick(NY_OTHER)
                card(at(11 * 60, 18 * 60), m[0], m[1], r.between(m[2], m[3]))
            card(at(12 * 60, 14 * 60), r.pick(NY_FOOD[2:8])[0], 5812, r.between(1600, 4200))
            card(at(19 * 60, 21 * 60), r.pick(NY_DINNER), 5812, r.between(7800, 16900))
        if r.chance(35):
            card(at(9 * 60, 22 * 60), UBER[0], UBER[1], r.between(1400, 4200))
        if k == "travel_back":
            card(at(8 * 60 + 35, 9 * 60 + 10), "The Hoxton Williamsburg", 7011,
                 r.between(268000, 296000))
            card(at(15 * 60 + 20, 15 * 60 + 50), "Hudson News EWR Terminal C", 5994, r.between(1200, 2900))
        self.fraud(d, r)

    # --- messages ----------------------------------------------------------------------------

    def reply_time(self, t, r, lo=8, hi=90):
        """When Lena answers something heard at t: minutes later, or after quiet hours."""
        return self.next_unquiet(t + r.between(lo, hi) * 60 + r.between(0, 59), r)

    def due(self, r, t):
        x = local_dt(t, BERLIN)
        wd, hour = x.weekday(), x.hour
        opts = ["by EOD", "tomorrow 3pm", "by tomorrow noon", "tomorrow morning", "by end of day"]
        if wd <= 2:
            opts += ["by Friday", "before Thursday", "by Thursday", "by Friday"]
        if wd == 3:
            opts += ["by Friday noon", "by Monday"]
        if wd == 4:
            opts += ["by Monday", "on Monday morning", "next week"]
        if hour < 12:
            opts += ["by 2pm today", "by 4pm", "in 2 hours"]
        return r.pick(opts)

    def messages(self, d):
        r = self.rng(d, "mail")
        k = self.kind(d)
        works = self.colleagues_work(d) and not self.in_break(d)
        self.newsletters(d, r)
        self.machines(d, r, works)
        if works:
            self.boss(d, r)
            self.client(d, r)
            self.colleagues(d, r)
            self.recruiting(d, r)
            self.admin(d, r)
            self.team_chat(d, self.rng(d, "chat"))
        elif self.in_break(d):
            self.break_mail(d, r)
        if not works:
            self.weekend_mail(d, self.rng(d, "weekend-mail"))
        self.family(d, self.rng(d, "family"))
        self.kita(d, r)
        if self.trip_of(d):
            self.trip_mail(d, self.rng(d, "trip"))

    def newsletters(self, d, r):
        wd = d.weekday()
        if wd < 6:
            a, b = r.sample(BERLIN_NEWS, 2)
            t = wall(BERLIN, d, 5 * 60 + 31, r.between(0, 59))
            self.mail(t, self.thread("checkpoint"),
                      "Tagesspiegel Checkpoint <checkpoint@newsletter.tagesspiegel.de>",
                      "Checkpoint: %s, %s" % (a[0].upper() + a[1:], b),
                      "Guten Morgen, liebe Leserinnen und Leser,\n\nheute im Checkpoint: %s, %s, "
                      "und was am Wochenende in Berlin los ist.\n\nIhr Checkpoint-Team" % (a, b))
        if wd < 5:
            a = r.pick(TECH_NEWS)
            self.mail(wall(BERLIN, d, 12 * 60 + r.between(28, 40), r.between(0, 59)),
                      self.thread("heise"), "heise online <newsletter@heise.de>",
                      "heise-Newsletter: %s" % a,
                      "Die wichtigsten Meldungen: %s, dazu Tests und Hintergründe.\n\nZum Newsletter" % a)
            self.mail(wall(BERLIN, d, 18 * 60 + r.between(8, 15), r.between(0, 59)),
                      self.thread("zeit"), "ZEIT ONLINE <newsletter@zeit.de>",
                      "Was jetzt? Der Abend",
                      "Guten Abend, das Wichtigste des Tages: %s und %s.\n\nZum Newsletter" % tuple(
                          r.sample(BERLIN_NEWS, 2)))
        if wd in (1, 3):
            self.mail(wall(NEW_YORK, d, 8 * 60 + r.between(0, 20)), self.thread("pragmatic"),
                      "The Pragmatic Engineer <pragmaticengineer@substack.com>",
                      r.pick(["The Pulse: on-call pay, layoffs and hiring", "How payments teams ship safely",
                              "Engineering managers and the 2027 budget", "Inside a ledger migration",
                              "Incident reviews that work"]),
                      "This week: what we're seeing in tech hiring, and a deep dive into %s.\n\nRead in app"
                      % r.pick(PROJECTS))
        if wd in (0, 3):
            self.mail(wall(BERLIN, d, 9 * 60 + r.between(30, 36)), self.thread("linkedin-jobs"),
                      "LinkedIn Job Alerts <jobalerts-noreply@linkedin.com>",
                      "%d new jobs for \"Engineering Manager\" in Berlin" % r.between(4, 19),
                      "Engineering Manager, Payments — Trade Republic · Berlin\nHead of Engineering — "
                      "Enpal · Berlin\nSee all jobs")
        if wd == 6:
            self.mail(wall(BERLIN, d, 19 * 60 + r.between(0, 30)), self.thread("n26-weekly"), N26,
                      "Your weekly spending summary",
                      "You spent %s this week across %d card payments. See your spaces for details."
                      % (euro(r.between(28000, 96000)), r.between(9, 24)))

    def machines(self, d, r, works):
        """GitHub, Jira, Confluence, Slack, PagerDuty: Berlin's working hours and the night."""
        self.mail(wall(BERLIN, d, 22 * 60 + 5, r.between(0, 59)), self.thread("gh-nightly"), GITHUB,
                  "[halden/ledger] Nightly build %s" % ("failed" if r.chance(8) else "succeeded"),
                  "Nightly build #%d on main finished in %dm %02ds." % (
                      2200 + (d - DEFAULT_START).days, r.between(21, 29), r.between(0, 59)))
        if not works:
            return
        for _ in range(r.between(2, 6)):
            pr = 1440 + self.count("pr")
            t = wall(BERLIN, d, r.between(8 * 60, 18 * 60 + 30), r.between(0, 59))
            author = r.pick(["sofia-brandt", "david-okafor", "tim-schreiber", "priya-natarajan"])
            what = r.pick(PROJECTS)
            th = self.thread("gh-%d" % pr)
            self.mail(t, th, GITHUB, "[halden/ledger] %s: %s (PR #%d)" % (what.split()[0], what, pr),
                      "@%s requested your review on: halden/ledger#%d %s.\n\n-- \nReply to this "
                      "email directly, view it on GitHub or unsubscribe." % (author, pr, what))
            if r.chance(60):
                self.mail(t + r.between(15, 200) * 60, th, GITHUB,
                          "Re: [halden/ledger] %s: %s (PR #%d)" % (what.split()[0], what, pr),
                          r.pick(["All checks have passed: 14 successful checks.",
                                  "Some checks were not successful: ci/integration (postgres-15) failed.",
                                  "@tim-schreiber approved these changes.", "Merged #%d into main." % pr])
                          + "\n\n-- \nView it on GitHub.")
        for _ in range(r.between(1, 4)):
            n = 880 + self.count("jira")
            t = wall(BERLIN, d, r.between(8 * 60, 18 * 60), r.between(0, 59))
            self.mail(t, self.thread("jira-led-%d" % n), JIRA,
                      "[JIRA] (LED-%d) %s" % (n, cap(r.pick(PROJECTS))),
                      r.pick(["%s created LED-%d\nPriority: %s\nAssignee: %s" % (
                          first_name(r.pick([SOFIA, DAVID, TIM, PRIYA])), n,
                          r.pick(["Medium", "High", "Low"]), r.pick(["Lena Hartmann", "David Okafor", "Tim Schreiber"])),
                              "Status changed: In Progress → In Review", "Status changed: Open → In Progress"]))
        if r.chance(50):
            self.mail(wall(BERLIN, d, r.between(9 * 60, 17 * 60)), self.thread("confluence"), CONFLUENCE,
                      "%s edited \"%s\"" % (first_name(r.pick([PRIYA, SOFIA, MARKUS])), r.pick(DOCS)),
                      "Changes: sections updated, comments resolved.\n\nView page")
        for minute in (7 * 60 + 49, 11 * 60 + 29):
            if r.chance(85):
                self.mail(wall(BERLIN, d, minute + r.between(0, 6), r.between(0, 59)),
                          self.thread("slack-digest"), SLACK,
                          "Catch up on %d new messages in #%s" % (r.between(4, 31), r.pick(
                              ["payments", "payments-oncall", "eng-leads", "random"])),
                          "%s: %s\n...and more" % (first_name(r.pick([SOFIA, DAVID, TIM, PRIYA])),
                                                   r.pick(["deploy is out", "can someone review?",
                                                           "retro notes are up", "lunch?"])))
        # The team's on-call weeks: alarms in the night.
        if d.isocalendar()[1] % 4 == 1 and r.chance(60):
            n = 48200 + self.count("incident")
            t = wall(BERLIN, d, r.between(0, 5 * 60), r.between(0, 59))
            th = self.thread("pd-%d" % n)
            what = r.pick(["settlement-batch failed", "payout API error rate", "ledger replication lag",
                           "settlement-worker queue depth", "KYC webhook timeouts"])
            self.mail(t - r.between(60, 300), self.thread("aws-alarm"), AWS,
                      "ALARM: \"ledger-prod-%s\" in EU (Frankfurt)" % what.split()[0],
                      "Your Amazon CloudWatch Alarm has entered the ALARM state: Threshold Crossed.")
            self.mail(t, th, PAGERDUTY, "[#%d] Triggered: critical: %s (ledger-prod)" % (n, what),
                      "Incident #%d triggered on service Ledger Production.\nUrgency: high\n"
                      "Assigned to: %s (primary on-call)" % (n, r.pick(["Sofia Brandt", "David Okafor"])))
            self.mail(t + r.between(20, 80) * 60, th, PAGERDUTY, "[#%d] Resolved: %s (ledger-prod)" % (n, what),
                      "Incident #%d resolved. Duration: %d min." % (n, r.between(18, 75)))

    def boss(self, d, r):
        """Markus: requests with due phrases, nudges, FYIs, now and then URGENT (some late)."""
        n = r.between(0, 2) + (1 if self.bad(d) else 0)
        for _ in range(n):
            t = wall(BERLIN, d, r.between(8 * 60, 18 * 60 + 30), r.between(0, 59))
            th = self.thread("markus")
            roll = r.below(100)
            if roll < 55:
                doc = r.pick(DOCS)
                due = self.due(r, t)
                subject = doc[0].upper() + doc[1:]
                self.mail(t, th, MARKUS, subject,
                          "Hi Lena,\n\ncould you send me the %s %s? %s\n\nThanks,\nMarkus%s" % (
                              doc, due, r.pick(["I want to go through it before the leadership sync.",
                                                "Anna asked for it.", "Keep it short, one page is fine.",
                                                "Happy to review a draft first."]), SIG_MARKUS))
                if r.chance(70):
                    self.mail(self.reply_time(t, r), th, LENA, "Re: " + subject,
                              "Will do, you'll have it %s.%s" % (due, SIG_LENA))
                if r.chance(30):
                    later = t + r.between(20, 30) * 3600
                    if not self.quiet(later):
                        self.mail(later, th, MARKUS, "Re: " + subject,
                                  "Any update on the %s? I need it for tomorrow morning.\n\nM." % doc)
            elif roll < 75:
                self.mail(t, th, MARKUS, "FYI: %s" % r.pick(PROJECTS),
                          "Lena,\n\nquick heads-up: the %s moves to next sprint, Anna agreed. No "
                          "action needed, just so you're not surprised in planning.\n\nM.%s" % (
                              r.pick(PROJECTS), SIG_MARKUS))
            else:
                late = r.chance(45)
                if late:
                    t = wall(BERLIN, d, r.between(22 * 60 + 5, 23 * 60 + 40), r.between(0, 59))
                what = r.pick(["LumenPay payouts delayed again", "the board wants the migration date",
                               "Northwind Bank escalated", "an audit finding on key rotation"])
                subject = "URGENT: " + what[0].upper() + what[1:]
                self.mail(t, th, MARKUS, subject,
                          "Lena,\n\n%s. Can you call me as soon as possible%s? I need an answer %s.\n\nM.%s" % (
                              what[0].upper() + what[1:], " tomorrow at 7:30" if late else "",
                              "before 9:00 tomorrow" if late else "by 2pm today", SIG_MARKUS))
                self.mail(self.reply_time(t, r, 3, 40), th, LENA, "Re: " + subject,
                          ("Saw it, will call you at 7:30." if late else
                           "On it, calling you in a minute.") + SIG_LENA)

    def client(self, d, r):
        if not r.chance(40 if not self.bad(d) else 80):
            return
        t = wall(BERLIN, d, r.between(8 * 60 + 30, 18 * 60), r.between(0, 59))
        late = r.chance(20)
        if late:
            t = wall(BERLIN, d, r.between(21 * 60 + 30, 23 * 60 + 15), r.between(0, 59))
        th = self.thread("claire")
        urgent = r.chance(30)
        n = r.between(3, 60)
        if urgent:
            subject = "Payout delay: need an update ASAP"
            body = ("Hi Lena,\n\n%d of our merchants are missing yesterday's payouts and our support "
                    "queue is filling up. Could you send us a written status as soon as possible, and "
                    "a full summary %s?\n\nThanks,\nClaire%s" % (n, self.due(r, t), SIG_CLAIRE))
        else:
            subject = r.pick(["Settlement report format", "Question on the payout API v2 timeline",
                              "QBR agenda", "New merchant volumes for Q1", "Reconciliation mismatches"])
            body = ("Hi Lena,\n\n%s Could you confirm %s?\n\nBest,\nClaire%s" % (
                r.pick(["our finance team asks whether the settlement report can include the fee split.",
                        "we are planning the Q1 rollout and need your dates.",
                        "we found %d mismatches in last week's reconciliation file." % n,
                        "our volumes will roughly double in January."]), self.due(r, t), SIG_CLAIRE))
        self.mail(t, th, CLAIRE, subject, body)
        if r.chance(75):
            self.mail(self.reply_time(t, r, 10, 120), th, LENA, "Re: " + subject,
                      "Hi Claire,\n\nthanks, we're on it. You'll have an answer %s.\n\nBest,\nLena%s" % (
                          self.due(r, t), SIG_LENA))

    def colleagues(self, d, r):
        for sender, sig, topics in [
                (PRIYA, SIG_PRIYA, ["Roadmap review: follow-ups", "Customer feedback on %s",
                                    "Can we move %s to Q1?", "Deck for the go/no-go"]),
                (SOFIA, SIG_SOFIA, ["Postmortem draft: %s", "On-call handover", "Capacity alert on %s",
                                    "Runbook update for %s"]),
                (DAVID, "", ["PR for %s", "Question on %s", "Estimates for %s"]),
                (TIM, "", ["HSM cert inventory", "Access request for %s", "Cert renewal for %s"]),
                (ANNA, "\n\nAnna Keller\nCTO, Halden Systems GmbH", ["Engineering all-hands agenda",
                                                                     "Headcount for 2027"])]:
            if not r.chance(25 if sender == ANNA else 55):
                continue
            t = wall(BERLIN, d, r.between(8 * 60 + 15, 18 * 60), r.between(0, 59))
            topic = r.pick(topics)
            subject = topic % r.pick(PROJECTS) if "%s" in topic else topic
            ask = r.pick(["Could you review it %s?" % self.due(r, t),
                          "Can you give me your input %s?" % self.due(r, t),
                          "Please add your comments %s." % self.due(r, t),
                          "No action needed, just FYI.",
                          "Do you have 15 minutes %s?" % r.pick(["tomorrow morning", "on Thursday", "today"])])
            th = self.thread(first_name(sender).lower())
            self.mail(t, th, sender, subject, "Hi Lena,\n\n%s %s\n\n%s%s" % (
                r.pick(["I put up a first version in the shared folder.",
                        "following up on yesterday's discussion.",
                        "the numbers changed after the last sprint.",
                        "quick one before the weekend."]), ask, first_name(sender), sig))
            if r.chance(35):
                self.mail(self.reply_time(t, r, 15, 180), th, LENA, "Re: " + subject,
                          r.pick(["Thanks, will look at it %s." % self.due(r, t), "Done, see my comments.",
                                  "Sure, let's talk tomorrow after stand-up."]) + SIG_LENA)

    def recruiting(self, d, r):
        for e in self.events_on(d, "interview"):
            name = e.title.split(": ")[1].split(" (")[0]
            self.mail(wall(BERLIN, d, 8 * 60 + r.between(0, 40)), self.thread("greenhouse"), GREENHOUSE,
                      "Interview today: %s, Senior Backend Engineer (%s)" % (name, hm(e.start, BERLIN)),
                      "Hi Lena,\n\nyou are interviewing %s today at %s (%s). Please submit your "
                      "scorecard by EOD tomorrow.\n\nHalden Systems Recruiting" % (
                          name, hm(e.start, BERLIN), e.location))
            self.mail(e.end + r.between(2, 30) * 60, self.thread("greenhouse"), GREENHOUSE,
                      "Scorecard due: %s" % name,
                      "Hi Lena, your interview with %s has ended. Please submit your scorecard by "
                      "tomorrow 17:00 while it's fresh." % name)

    def events_on(self, d, slug):
        out = []
        for e in self.events:
            if e.cancelled is None and e.id.startswith("ev-%s-%s" % (slug, d.strftime("%Y%m%d"))):
                out.append(e)
        return out

    def admin(self, d, r):
        if d.day in (20, 21, 22) and d.weekday() < 5 and r.chance(50):
            self.mail(wall(BERLIN, d, 9 * 60 + r.between(50, 59)), self.thread("expenses"), FINANCE_TEAM,
                      "Reminder: %s expense reports due Friday" % MONTHS_LONG[d.month - 1],
                      "Hi all,\n\na friendly reminder that %s expense reports are due by Friday, "
                      "12:00.\n\nThanks,\nFinance" % MONTHS_LONG[d.month - 1])
        if r.chance(6):
            self.mail(wall(BERLIN, d, r.between(9 * 60, 16 * 60)), self.thread("it"), IT_DESK,
                      r.pick(["Your Halden password expires in 3 days", "Laptop update required by Friday",
                              "Scheduled maintenance: VPN on Saturday 22:00"]),
                      "Hello Lena Hartmann,\n\nplease take action before the deadline to avoid being "
                      "locked out.\n\nIT Service Desk · ext. 4000")
        for slug in ("dentist", "kinderarzt", "physio"):
            for e in self.events_on(d + timedelta(days=1), slug):
                self.mail(wall(BERLIN, d, 12 * 60 + r.between(30, 50)), self.thread("doctolib"), DOCTOLIB,
                          "Reminder: your appointment tomorrow at %s" % hm(e.start, BERLIN),
                          "Hello Lena Hartmann,\n\nthis is a reminder of your appointment tomorrow at "
                          "%s: %s, %s. To cancel, use the app at least 24 hours in advance." % (
                              hm(e.start, BERLIN), e.title, e.location))
        if d.weekday() == 0 and self.kind(d) == "work":
            self.mail(wall(BERLIN, d, 15 * 60 + r.between(20, 35)), self.thread("usc"),
                      "Urban Sports Club <hello@urbansportsclub.com>", "Your Pilates class today at 18:30",
                      "Hi Lena, see you at Pilates Loft Mitte today at 18:30 (Pilates Mat, 60 min). "
                      "Cancel free of charge until 16:30.")

    DM_LINES = [
        "Hey, do you have 5 min?", "Can you approve my vacation request?", "Quick question on {p}.",
        "Did you see my mail about the {d}?", "Can you join the {p} call at 15:00?",
        "Are we still on for our 1:1?", "Could you review the {d} by tomorrow?",
        "FYI I'm out tomorrow afternoon.", "Can I share the {d} with the client?",
        "Who decides on {p} now?", "I'll be 10 min late.", "Need your +1 on the {p} budget.",
    ]

    TEAM_LINES = [
        "Stand-up in 3 min, keeping it short.", "Deploy of {p} is out, watching the dashboards.",
        "Can someone review #{pr}? Small one.", "Coffee machine on 3 is broken again, FYI.",
        "Anyone up for lunch at 12?", "Retro notes are in Confluence.", "I'm WFH today, ping me here.",
        "CI is flaky again on ci/integration, rerunning.", "LED-{t} is ready for review.",
        "Who has the key for Raum Havel? Locked.", "Heading out, see you tomorrow.",
        "Running 5 min late to the sync, start without me.", "Merged #{pr}, thanks for the review!",
        "The bank sandbox is down again, tests will fail for a bit.", "Numbers for {p} updated in the sheet.",
        "Lena, do you have 5 min after lunch?", "Can we move the {p} sync to 15:00?",
        "Staging is green again.", "Merchant support asks about {p}, who can answer?",
        "Pushed a fix for the flaky test.", "Postmortem draft ready for comments.",
        "Reminder: demo at 16:00 in Spree.", "Is anyone looking at LED-{t}?",
        "Ticket for {p} is in the backlog now.", "Thanks all, great sprint!",
        "Lunch & learn tomorrow on {p}, bring questions.", "On-call handover done.",
        "The release notes for {p} are up.", "Can I get a quick +1 on #{pr}?",
        "Dashboards look fine after the deploy.", "Back from the dentist, catching up.",
        "Who's joining the guild today?", "Sprint board is updated.",
    ]

    def team_chat(self, d, r):
        n = r.between(40, 90) if not self.bad(d) else r.between(70, 110)
        people = [SOFIA, DAVID, TIM, PRIYA, MARKUS]
        for _ in range(n):
            t = wall(BERLIN, d, r.between(8 * 60 + 40, 18 * 60 + 20), r.between(0, 59))
            line = r.pick(self.TEAM_LINES).format(p=r.pick(PROJECTS), pr=1440 + r.between(0, 120),
                                                  t=880 + r.between(0, 90))
            channel = r.pick(["chat-payments", "chat-payments", "chat-oncall", "chat-random", "chat-leads"])
            sender = r.pick(people if channel != "chat-leads" else [MARKUS, PRIYA, ANNA])
            self.chat(t, channel, sender, line)
        # Direct messages: a question to her, sometimes answered.
        for _ in range(r.between(2, 8)):
            sender = r.pick([SOFIA, DAVID, TIM, PRIYA, MARKUS, ANNA])
            t = wall(BERLIN, d, r.between(8 * 60 + 50, 18 * 60), r.between(0, 59))
            channel = "chat-dm-%s" % first_name(sender).lower()
            self.chat(t, channel, sender, r.pick(self.DM_LINES).format(p=r.pick(PROJECTS), d=r.pick(DOCS)))
            if r.chance(50):
                self.chat(self.reply_time(t, r, 1, 25), channel, LENA, r.pick(
                    ["Sure, give me 10 min.", "Yes, done.", "Can we do it after lunch?", "Thanks!",
                     "Let's talk at the 1:1.", "On it."]))

    FAMILY_LINES = [
        "Kannst du Milch mitbringen?", "Emil will heute Nudeln, ok?", "Bin in 20 min zuhause.",
        "Did you see the Kita letter?", "Wir haben kein Brot mehr.", "Shall I order something for dinner?",
        "Emil's asleep. Come to bed soon? xx", "Train is delayed, home at 19:30.",
        "Can you call the Hausverwaltung about the heating?", "Love you", "Photo from the playground 📷",
        "Emil fragt, ob wir am Wochenende in den Zoo gehen.", "I'm taking the car tomorrow, ok?",
        "Oma fragt, wann wir Weihnachten kommen.", "Hast du den Schlüssel?", "Picking up Emil now.",
    ]

    def family(self, d, r):
        k = self.kind(d)
        weekend = k in ("free", "break", "ny_free", "return")
        n = r.between(6, 18) if weekend else r.between(2, 7)
        for _ in range(n):
            t = wall(BERLIN, d, r.between(7 * 60 + 30, 22 * 60 + 50), r.between(0, 59))
            self.chat(t, "chat-familie", r.pick([JONAS, JONAS, JONAS, UTE, KATRIN, ROLF]),
                      r.pick(self.FAMILY_LINES))
        if weekend or r.chance(30):
            for _ in range(r.between(2, 16) if weekend else r.between(0, 4)):
                t = wall(BERLIN, d, r.between(8 * 60, 21 * 60 + 30), r.between(0, 59))
                self.chat(t, "chat-kita-eltern", r.pick(PARENTS), r.pick([
                    "Hat jemand eine Ersatz-Matschhose in Größe 104?", "Danke für die Fotos!",
                    "Wer bringt am Freitag Kuchen mit?", "Spielplatz Kollwitzplatz um 15 Uhr, wer kommt?",
                    "Bei uns ist jetzt auch der Husten angekommen 🙈", "Laternen basteln am Mittwoch?",
                    "Weiß jemand, ob am Brückentag offen ist?", "Die Elternvertretung trifft sich Dienstag."]))
        if weekend:
            for _ in range(r.between(0, 14)):
                t = wall(BERLIN, d, r.between(9 * 60, 23 * 60), r.between(0, 59))
                self.chat(t, "chat-freunde", r.pick([NELE, KATRIN, "Paul Becker <paul.becker@gmail.com>",
                                                     "Sina Yilmaz <sina.yilmaz@web.de>"]), r.pick([
                    "Wer ist heute Abend dabei?", "Brunch morgen um 11?", "Haha, genau so 😂",
                    "Schickt mal die Fotos von gestern!", "Wir sind eher so 20 Uhr da.",
                    "Kinder schlafen, wir kommen später.", "Kennt jemand einen guten Kinderarzt?",
                    "Happy Birthday, Nele! 🎉", "Mauerpark oder Tempelhofer Feld?", "Bin raus, krank 🤒"]))
        # Jonas by mail: logistics with due phrases, now and then urgent.
        if k in ("work",) and r.chance(45):
            t = wall(BERLIN, d, r.between(7 * 60, 15 * 60), r.between(0, 59))
            th = self.thread("jonas")
            if r.chance(15) or (self.bad(d) and r.chance(50)):
                self.mail(t, th, JONAS, "URGENT: Emil has a fever",
                          "The Kita just called, Emil has 38.9. I'm stuck in Hamburg until tonight. "
                          "Can you pick him up as soon as possible? Let me know.\n\nJ")
                self.mail(self.reply_time(t, r, 2, 15), th, LENA, "Re: URGENT: Emil has a fever",
                          "On my way, will be there in 30 min.")
            else:
                subject = r.pick(["Emil heute abholen?", "Weekend plans", "Groceries", "Kinderarzt"])
                body = {
                    "Emil heute abholen?": "Hey, my meeting runs late. Could you pick up Emil from Kita "
                                           "today at 16:30? Let me know by noon.\n\nJ",
                    "Weekend plans": "Nele and Paul asked if we want to come for dinner on Saturday at "
                                     "19:00. Can you tell me by Thursday?\n\nJ",
                    "Groceries": "Can you get milk and the cough syrup on the way home tonight? The "
                                 "pharmacy closes at 19:00.",
                    "Kinderarzt": "Emil's check-up is due. Can you book something for next week? "
                                  "Mornings work best for me.",
                }[subject]
                self.mail(t, th, JONAS, subject, body)
                if r.chance(70):
                    self.mail(self.reply_time(t, r, 5, 120), th, LENA, "Re: " + subject,
                              r.pick(["Yes, I'll do it.", "Can't today, can you ask your mum?",
                                      "Sure, will do.", "Let's talk tonight."]))
        # Late-night chat and Ute's weekly mail.
        if r.chance(20):
            self.chat(wall(BERLIN, d, r.between(22 * 60 + 40, 23 * 60 + 50), r.between(0, 59)),
                      "chat-familie", JONAS, r.pick(["Come to bed soon? xx", "Did you lock the door?",
                                                     "Emil is coughing again, I'll go."]))
        if d.weekday() == 6 and r.chance(70):
            t = wall(BERLIN, d, r.between(10 * 60, 20 * 60))
            xmas = d.month in (11, 12) and d.day < 24 or d.month == 10 and d.day > 20
            self.mail(t, self.thread("ute"), UTE,
                      "Weihnachten bei uns?" if xmas else "Grüße aus Lübeck",
                      ("Hallo Lena,\n\nkommt ihr Weihnachten zu uns nach Lübeck? Papa will die "
                       "Zugtickets bald buchen. Sag bis Freitag Bescheid.\n\nLiebe Grüße\nMama") if xmas else
                      ("Hallo Lena,\n\nbei uns ist alles gut, Papa hat den Garten winterfest gemacht. "
                       "Wie geht es Emil?\n\nLiebe Grüße\nMama"))

    def kita(self, d, r):
        if self.in_break(d) or d.weekday() >= 5 or self.kind(d) == "free":
            return
        t = wall(BERLIN, d, r.between(7 * 60 + 20, 16 * 60 + 30), r.between(0, 59))
        martin = date(d.year, 11, 11)
        if d == martin - timedelta(days=7):
            self.mail(t, self.thread("kita"), KITA, "Elternbrief: Laternenfest am %s" % WEEKDAYS_DE[martin.weekday()],
                      "Liebe Eltern,\n\nam %s, %d.11., feiern wir ab 17 Uhr unser Laternenfest im Garten "
                      "der Kita. Bitte gebt euren Kindern eine Laterne und warme Sachen mit.\n\nHerzliche "
                      "Grüße\nSabine Krüger, Kitaleitung" % (WEEKDAYS_DE[martin.weekday()], martin.day))
        elif d.month == 12 and d.day in (1, 2) and d.weekday() < 5:
            self.mail(t, self.thread("kita"), KITA, "Elternbrief: Schließzeit über Weihnachten",
                      "Liebe Eltern,\n\ndie Kita ist vom 24.12. bis einschließlich 1.1. geschlossen. "
                      "Bitte gebt uns bis Freitag Bescheid, ob euer Kind am 22. und 23.12. kommt.\n\n"
                      "Herzliche Grüße\nSabine Krüger")
        elif self.bad(d) and d.weekday() == 1:
            self.mail(t, self.thread("kita"), KITA, "Dringend: Emil hat Fieber",
                      "Liebe Frau Hartmann,\n\nEmil hat 38,7 Fieber. Bitte holen Sie ihn dringend ab, "
                      "spätestens um 12 Uhr.\n\nViele Grüße\nSabine Krüger")
        elif r.chance(12):
            subject, body = r.pick([
                ("Emil: Husten", "Liebe Frau Hartmann,\n\nEmil hat heute viel gehustet, Fieber hatte "
                                 "er aber nicht. Bitte behalten Sie ihn im Auge.\n\nViele Grüße\nSabine Krüger"),
                ("Elternbrief: Fotograf am Donnerstag", "Liebe Eltern,\n\nam Donnerstag kommt der "
                 "Fotograf. Bitte bringt eure Kinder bis 9 Uhr.\n\nHerzliche Grüße\nSabine Krüger"),
                ("Elternbrief: Schließtag", "Liebe Eltern,\n\nwegen einer Teamfortbildung ist die "
                 "Kita am Freitag in zwei Wochen geschlossen. Bitte plant die Betreuung rechtzeitig.\n\n"
                 "Herzliche Grüße\nSabine Krüger"),
                ("Läuse in der Igelgruppe", "Liebe Eltern,\n\nin der Igelgruppe wurden Läuse entdeckt. "
                 "Bitte kontrolliert eure Kinder bis morgen früh.\n\nHerzliche Grüße\nSabine Krüger"),
            ])
            self.mail(t, self.thread("kita"), KITA, subject, body)

    def weekend_mail(self, d, r):
        """Shops, clubs and friends write on days off too."""
        for _ in range(r.between(2, 6)):
            sender, subject, body = r.pick([
                ("Zalando <info@service-mail.zalando.de>", "Neu für dich: Winterjacken",
                 "Hallo Lena, entdecke die neuen Styles der Saison. Nur bis Sonntag: 20 % auf Outdoor."),
                ("IKEA Family <family@ikea.de>", "Deine Vorteile im %s" % MONTHS_LONG[d.month - 1],
                 "Hej Lena, diesen Monat für IKEA Family Mitglieder: Kaffee gratis und Rabatte auf Textilien."),
                ("Deutsche Bahn <newsletter@bahn.de>", "Super Sparpreise ab 17,99 €",
                 "Jetzt buchen: mit dem Super Sparpreis quer durch Deutschland. Angebot gilt bis Dienstag."),
                ("Urban Sports Club <hello@urbansportsclub.com>", "New classes near you",
                 "Hi Lena, 12 new studios joined in Prenzlauer Berg this month: yoga, climbing and more."),
                ("Kiezkind Newsletter <hallo@kiezkind.de>", "Wochenendtipps für Familien",
                 "Puppentheater, Herbstbasteln und ein Kinderflohmarkt: unsere Tipps für das Wochenende."),
                (NELE, "Samstag?", "Hey Lena,\n\nhabt ihr am Samstag Zeit? Wir würden gerne grillen, "
                 "oder drinnen Raclette, je nach Wetter. Sag bis Freitag Bescheid!\n\nNele"),
                (KATRIN, "Fotos vom Wochenende", "Hi Lena,\n\nanbei die Fotos. Emil ist so groß geworden!\n\nKatrin"),
                ("Spotify <no-reply@spotify.com>", "Neue Musik für dich", "Dein Mix der Woche ist da."),
                ("Airbnb <automated@airbnb.com>", "Noch auf der Suche nach einer Unterkunft?",
                 "Lena, deine gespeicherten Unterkünfte an der Ostsee sind noch frei."),
                ("Hausverwaltung Krämer <service@hv-kraemer.de>", "Treppenhausreinigung",
                 "Sehr geehrte Mieter, die Treppenhausreinigung findet ab sofort dienstags statt."),
            ])
            t = wall(BERLIN, d, r.between(7 * 60, 21 * 60 + 30), r.between(0, 59))
            self.mail(t, self.thread("private"), sender, subject, body)

    def break_mail(self, d, r):
        if d.weekday() < 5 and r.chance(40):
            self.mail(wall(BERLIN, d, r.between(10 * 60, 16 * 60)), self.thread("markus"), MARKUS,
                      r.pick(["No need to reply before January", "Happy holidays!", "Quick thing for January"]),
                      "Lena,\n\nenjoy the break. One thing for when you're back: the %s, by Friday "
                      "the 8th is fine.\n\nM.%s" % (r.pick(DOCS), SIG_MARKUS))
        for _ in range(r.between(1, 3)):
            sender, subject = r.pick([
                (NELE, "Frohe Weihnachten!"), (KATRIN, "Silvester bei uns?"),
                ("DHL Paket <noreply@dhl.de>", "Ihre Sendung kommt heute"),
                ("Deutsche Bahn <noreply@bahn.de>", "Ihre Reiseverbindung"),
                ("Spotify <no-reply@spotify.com>", "Dein Jahr in Musik"),
                ("Zalando <info@service-mail.zalando.de>", "Winter Sale: bis zu 50 %")])
            self.mail(wall(BERLIN, d, r.between(9 * 60, 21 * 60)), self.thread("break"), sender, subject,
                      "Hallo Lena,\n\n%s\n\nLiebe Grüße" % r.pick([
                          "wir wünschen euch schöne Feiertage!", "hier sind die Details.",
                          "kommt ihr am 31. vorbei? Ab 20 Uhr.", "danke für alles dieses Jahr."]))

    def trip_mail(self, d, r):
        trip = self.trip_of(d)
        if d == trip.dep_date:
            self.mail(wall(BERLIN, d, 7 * 60 + 2), self.thread("united"),
                      "United Airlines <unitedairlines@united.com>", "Your boarding pass for UA 963",
                      "Lena, your flight UA 963 to Newark departs at 10:15 from BER Terminal 1, gate "
                      "B14. Boarding starts at 09:35.")
            self.mail(trip.arrive_t + 40, self.thread("vodafone"), "Vodafone <info@vodafone.de>",
                      "Willkommen in den USA",
                      "Willkommen in den USA! Mit dem Vodafone TravelPass surfst du für 7,99 € am Tag.")
            self.mail(trip.arrive_t + r.between(600, 1800), self.thread("rachel"), RACHEL,
                      "Welcome to New York!",
                      "Hi Lena,\n\nhope the flight was ok. Dinner tonight at 19:30 near the hotel if "
                      "you're up for it? Tomorrow we start at 9:30 at the office.\n\nRachel" + SIG_RACHEL)
            return
        if d == trip.land_date:
            self.mail(trip.home_t + r.between(60, 600), self.thread("jonas"), JONAS, "Welcome home!",
                      "We're at arrivals! Emil made a sign.")
            return
        # In New York: Rachel and the client, New York hours.
        if self.kind(d) in ("ny_work", "travel_back"):
            for _ in range(r.between(1, 3)):
                t = wall(NEW_YORK, d, r.between(8 * 60, 18 * 60), r.between(0, 59))
                sender = r.pick([RACHEL, ETHAN])
                subject = r.pick(["Agenda for today", "Notes from the workshop", "Northwind follow-ups",
                                  "Dinner on Thursday?", "Slides for the meetup"])
                self.mail(t, self.thread("nyc"), sender, subject,
                          "Hi Lena,\n\n%s Can you send me your comments %s?\n\n%s" % (
                              r.pick(["thanks for today, great session.", "attaching the notes.",
                                      "Ethan's team has a few more questions on settlement."]),
                              self.due(r, wall(BERLIN, d, 12 * 60)), first_name(sender)))
            for _ in range(r.between(5, 14)):
                t = wall(NEW_YORK, d, r.between(9 * 60, 18 * 60), r.between(0, 59))
                self.chat(t, "chat-nyc", r.pick([RACHEL, "Marcus Lee <marcus.lee@halden-systems.com>",
                                                 "Dana Whitfield <dana.whitfield@halden-systems.com>"]),
                          r.pick(["Room 24B is free, let's go there.", "Lunch is here!",
                                  "Client is 10 min late.", "Slides are in the shared drive.",
                                  "Great workshop today, thanks Lena!", "Car to Liberty Plaza at 13:30?"]))
        if d == trip.back_date:
            self.mail(wall(NEW_YORK, d, 9 * 60 + 5), self.thread("united"),
                      "United Airlines <unitedairlines@united.com>", "Check in for your flight to Berlin",
                      "Lena, check in now for UA 962, departing today at 17:55 from Newark Terminal C.")

    # --- assembly ----------------------------------------------------------------------------

    def build(self):
        self.invites_fixed = []
        self.fraud_days = {}
        self.fraud_done = []
        self.special_events()
        d = self.hist_start
        last = self.end + timedelta(days=1)
        while d <= last:
            self.last_amount = 0
            self.money(d)
            if d >= self.start - timedelta(days=21):
                self.recurring(d)
                self.adhoc(d)
            if d >= self.start:
                self.invitations(d)
                self.messages(d)
                for t, data in self.readings(d):
                    self.emit(t, "reading", data)
                night = self.night(d)
                if not night.missing:
                    self.emit(night.sync, "sleep_session",
                              {"start": self.fmt(night.start), "end": self.fmt(night.end)})
            d += timedelta(days=1)
        for trip in self.trips:
            self.emit(trip.arrive_t, "utc_offset",
                      {"utc_offset_minutes": offset_minutes(NEW_YORK, trip.arrive_t), "time_zone": NEW_YORK})
            for t in trip.ny_changes:
                self.emit(t, "utc_offset",
                          {"utc_offset_minutes": offset_minutes(NEW_YORK, t), "time_zone": NEW_YORK})
            self.emit(trip.home_t, "utc_offset",
                      {"utc_offset_minutes": offset_minutes(BERLIN, trip.home_t), "time_zone": BERLIN})
        initial_events = []
        for e in self.events:
            if e.created < self.t0:
                if e.cancelled is not None and e.cancelled < self.t0:
                    continue
                if e.end >= self.t0 - EVENT_CONTEXT_DAYS * DAY_S:
                    initial_events.append(e)
                    if e.cancelled is not None:
                        self.emit(e.cancelled, "cancel_event", {"id": e.id})
                continue
            self.emit(e.created, "event", e.data())
            if e.cancelled is not None:
                self.emit(e.cancelled, "cancel_event", {"id": e.id})
        initial_events.sort(key=lambda e: (e.start, e.id))
        return initial_events

    def write(self, out_dir):
        initial_events = self.build()
        t1 = self.day_start(self.end)
        chosen = []
        for s in sorted(self.signals, key=lambda s: (s[0], s[1], s[2])):
            if s[0] < self.t0:
                continue
            day = self.local_date(s[0])
            if day < self.start or day >= self.end:
                continue
            chosen.append(s)
        ids = {}
        lines = []
        for i, (t, _, _, kind, data, prefix) in enumerate(chosen):
            if prefix is not None:
                day = self.local_date(t).strftime("%Y%m%d")
                n = ids.get((prefix, day), 0) + 1
                ids[(prefix, day)] = n
                data = dict(data)
                data["id"] = "%s-%s-%03d" % (prefix, day, n)
            line = {"id": "l-%06d" % i, "at": self.fmt(t), "kind": kind, "data": data}
            lines.append(json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
        hist = sorted(self.history, key=lambda x: (x[0], x[1], x[3]))
        hist_ids = {}
        transactions = []
        for t, merchant, mcc, amount, currency in hist:
            if t < self.t0 - HISTORY_DAYS * DAY_S:
                continue
            day = self.local_date(t).strftime("%Y%m%d")
            n = hist_ids.get(day, 0) + 1
            hist_ids[day] = n
            tx = {"id": "tx-%s-%03d" % (day, n), "merchant": merchant, "amount_minor": amount,
                  "currency": currency, "time": self.fmt(t)}
            if mcc is not None:
                tx["mcc"] = "%04d" % mcc
            transactions.append(tx)
        sleep = []
        for i in range(SLEEP_HISTORY_NIGHTS, 0, -1):
            night = self.night(self.start - timedelta(days=i - 1) - timedelta(days=1))
            if not night.missing:
                sleep.append({"start": self.fmt(night.start), "end": self.fmt(night.end)})
        zone = self.zone_at(self.t0)
        setup = {
            "scenario": "life",
            "description": (
                "Lena Hartmann's life from %s (seed %d), written by scenarios/gen_life.py: "
                "working weeks, weekends, the Christmas break, a trip to New York, the watch every 5 "
                "minutes, her inbox, calendar, invitations and card. The live session rolls over at "
                "her local midnight." % (self.start.isoformat(), self.seed)),
            "start": fmt_in(self.t0, zone),
            "time_zone": zone,
            "tick_minutes": 15,
            "utc_offset_minutes": offset_minutes(zone, self.t0),
            "tick_on": ["message", "transaction", "invitation", "answer"],
            "profile": profile(BUDGETS),
            "initial": {
                "events": [e.data() for e in initial_events][:500],
                "transactions": transactions[-2000:],
                "sleep_sessions": sleep[-100:],
            },
        }
        os.makedirs(out_dir, exist_ok=True)
        setup_text = json.dumps(setup, indent=1, ensure_ascii=False) + "\n"
        with open(os.path.join(out_dir, "setup.json"), "w", encoding="utf-8", newline="\n") as f:
            f.write(setup_text)
        signals_text = "".join(line + "\n" for line in lines)
        with open(os.path.join(out_dir, "signals.jsonl"), "w", encoding="utf-8", newline="\n") as f:
            f.write(signals_text)
        counts = {}
        for _, _, _, kind, _, _ in chosen:
            counts[kind] = counts.get(kind, 0) + 1
        return len(lines), counts, len(setup_text.encode("utf-8")), len(signals_text.encode("utf-8")), setup


# The profile's budgets: scenarios/live.json's (the profile is gen_day.py's, with these).
BUDGETS = [
    {"category": "groceries", "currency": "EUR", "limit_minor": 70000},
    {"category": "dining", "currency": "EUR", "limit_minor": 20000},
    {"category": "shopping", "currency": "EUR", "limit_minor": 20000},
    {"category": "transport", "currency": "EUR", "limit_minor": 12000},
    {"category": "subscriptions", "currency": "EUR", "limit_minor": 5000},
    {"category": "entertainment", "currency": "EUR", "limit_minor": 10000},
]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--days", type=int, required=True, help="how many local days to write")
    p.add_argument("--start", default=DEFAULT_START.isoformat(), help="the first day (YYYY-MM-DD)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True, help="the directory to write setup.json and signals.jsonl to")
    args = p.parse_args(argv)
    if args.days < 1 or args.days > 3660:
        p.error("--days must be 1..3660")
    start = date.fromisoformat(args.start)
    life = Life(start, args.days, args.seed)
    n, counts, setup_bytes, signal_bytes, _ = life.write(args.out)
    print("wrote %s: %d signals (%s), signals.jsonl %d bytes, setup.json %d bytes" % (
        args.out, n, ", ".join("%s %d" % (k, counts[k]) for k in sorted(counts)), signal_bytes,
        setup_bytes), file=sys.stderr)


if __name__ == "__main__":
    main()
