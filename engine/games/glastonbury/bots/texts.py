"""Plain-words reasons for hints, in French, English and German."""

from __future__ import annotations

from typing import Final

from engine.games.glastonbury.rules.cards import CATALOGUE, Lang, card_label

TEXTS: Final[dict[str, dict[Lang, str]]] = {
    "gain": {
        "en": "{card} is worth {gain:+d} points to your cauldron",
        "fr": "{card} rapporte {gain:+d} points à votre chaudron",
        "de": "{card} bringt Ihrem Kessel {gain:+d} Punkte",
    },
    "gain_family": {
        "en": "{card} makes {count} cards of its family ({gain:+d} points)",
        "fr": "{card} fait {count} cartes de sa famille ({gain:+d} points)",
        "de": "{card} ergibt {count} Karten seiner Familie ({gain:+d} Punkte)",
    },
    "deny": {
        "en": "and keeps it from the {colour} player, who would gain {points} points",
        "fr": "et l'enlève au joueur {colour}, qui y gagnerait {points} points",
        "de": "und nimmt sie dem Spieler {colour} weg, der {points} Punkte gewänne",
    },
    "deny_one": {
        "en": "and takes a 1 of the {colour} player's own colour",
        "fr": "et prend un 1 de la couleur du joueur {colour}",
        "de": "und nimmt eine 1 in der Farbe des Spielers {colour}",
    },
    "with_accio": {
        "en": "(using one Accio)",
        "fr": "(avec un Accio)",
        "de": "(mit einem Accio)",
    },
    "accio": {
        "en": "Accio lets you take any card of the square later (2 uses)",
        "fr": "Accio permet ensuite de prendre n'importe quelle carte du carré (2 usages)",
        "de": "Accio erlaubt später, jede Karte des Quadrats zu nehmen (2 Anwendungen)",
    },
    "declinatio": {
        "en": "Declinatio lets you move on from a corner (3 uses)",
        "fr": "Declinatio permet de repartir d'un coin (3 usages)",
        "de": "Declinatio erlaubt, von einer Ecke weiterzuziehen (3 Anwendungen)",
    },
    "vanesco": {
        "en": "Vanesco removes your opponents' top cards: they lose {points} points",
        "fr": "Vanesco retire les cartes du dessus adverses : ils perdent {points} points",
        "de": "Vanesco entfernt die obersten Karten der Gegner: sie verlieren {points} Punkte",
    },
    "perluceo": {
        "en": "Perluceo only lets you look at your own cauldron; it is worth little",
        "fr": "Perluceo permet seulement de regarder votre chaudron ; il vaut peu",
        "de": "Perluceo zeigt nur Ihren eigenen Kessel; er ist wenig wert",
    },
    "use_declinatio": {
        "en": "use Declinatio: the next line offers {card} ({gain:+d} points)",
        "fr": "utilisez Declinatio : la ligne suivante offre {card} ({gain:+d} points)",
        "de": "Declinatio nutzen: die nächste Reihe bietet {card} ({gain:+d} Punkte)",
    },
    "pass": {
        "en": "pass: nothing in the next line is worth a Declinatio use",
        "fr": "passez : rien dans la ligne suivante ne vaut un usage de Declinatio",
        "de": "passen: nichts in der nächsten Reihe ist eine Declinatio-Anwendung wert",
    },
    "keep": {
        "en": "keep the last card: {gain:+d} points",
        "fr": "gardez la dernière carte : {gain:+d} points",
        "de": "die letzte Karte behalten: {gain:+d} Punkte",
    },
    "discard": {
        "en": "discard the last card: keeping it would not help ({gain:+d} points)",
        "fr": "défaussez la dernière carte : la garder n'aiderait pas ({gain:+d} points)",
        "de": "die letzte Karte ablegen: Behalten hilft nicht ({gain:+d} Punkte)",
    },
    "least_bad": {
        "en": "the least costly card in reach",
        "fr": "la carte la moins coûteuse à portée",
        "de": "die am wenigsten teure Karte in Reichweite",
    },
    "search": {
        "en": "in {sims} simulated endings it finished {margin:+.1f} points ahead of the best "
        "opponent on average (next best move: {other:+.1f})",
        "fr": "sur {sims} fins de partie simulées, elle finit en moyenne à {margin:+.1f} points "
        "du meilleur adversaire (coup suivant : {other:+.1f})",
        "de": "in {sims} simulierten Partieenden lag sie im Schnitt {margin:+.1f} Punkte vor dem "
        "besten Gegner (nächstbester Zug: {other:+.1f})",
    },
}


def text(key: str, lang: Lang, **params: object) -> str:
    templates = TEXTS[key]
    return templates.get(lang, templates["en"]).format(**params)


def label(card: str, lang: Lang) -> str:
    return card_label(card, lang)


def colour_name(colour: str, lang: Lang) -> str:
    for entry in CATALOGUE["colours"]:
        if entry["id"] == colour:
            return str(entry["names"][lang])
    return colour
