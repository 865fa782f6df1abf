"""Altair theme and output helpers shared by every figure notebook, one module per concern,
their public names gathered here so a notebook calls ``figures.<name>``.

Charts render as static SVG through vl-convert, so the book needs no network and no
JavaScript to show them; each figure also writes the tidy table it plotted so numbers, not
pixels, can be compared in CI.

- :mod:`.theme`: size, text column, palette, the fluid model's versions and their dashes
- :mod:`.marks`: the marks every figure draws alike (fluid curves, measured bars, notes)
- :mod:`.checks`: the craft checks a figure passes before it is saved
- :mod:`.glance`: the checks that it reads at a glance (legends, colours, layers, reach)
- :mod:`.rendering`: titles fitted to the column, the spec and SVG, saving with the table
- :mod:`.origins`: the provenance line and the "Re-run this figure" box
- :mod:`.page`: showing and gluing a figure, values and sentences on its page
- :mod:`.tables`: compact HTML tables on a page
- :mod:`.embed`: charts the reader drives, embedded with the book's own Vega bundle
- :mod:`.phone`: a figure's second drawing for a phone's column, served to narrow screens
"""

from .checks import (  # noqa: F401 (re-exported)
    MIN_SWATCH_CONTRAST,
    MIN_WIDTH_SHARE,
    STATUS_TEXT,
    FigureError,
    check_campaigns,
    check_craft,
    check_facet_grid,
    check_size,
    svg_width,
)
from .embed import VEGA_JS, interactive  # noqa: F401 (re-exported)
from .glance import (  # noqa: F401 (re-exported)
    LEGEND_REACH_PX,
    MAX_SUBTITLE_LINES,
    MEASURED_STYLE,
    MIN_COLOUR_DIFFERENCE,
    MODEL_STYLE,
    check_colours_apart,
    check_glance,
    check_layer_order,
    check_legend_dashes,
    check_legend_reach,
    check_subtitle_lines,
    colour_difference,
)
from .marks import (  # noqa: F401 (re-exported)
    fluid_line,
    measured_marks,
    note,
    panels_in_rows,
    series_key,
)
from .origins import provenance, rerun_box, value_text  # noqa: F401 (re-exported)
from .page import (  # noqa: F401 (re-exported)
    glue,
    glue_sentence,
    listing,
    longer_run_report,
    page_key,
    quoted_list,
    result,
    show,
)
from .phone import (  # noqa: F401 (re-exported)
    PHONE_COLUMN,
    PHONE_MIN_FONT,
    displayed_font,
    phone_spec,
    phone_svg,
)
from .rendering import fit_titles, render, save  # noqa: F401 (re-exported)
from .tables import TABLE_ROWS, show_table, table  # noqa: F401 (re-exported)
from .theme import (  # noqa: F401 (re-exported)
    CATEGORY,
    COLUMN,
    FLUID,
    FLUID_DASH,
    FLUID_SHOWN,
    FLUID_STYLE_NOTE,
    FLUID_VERSIONS,
    HEIGHT,
    MEASURED_COLOUR,
    MIN_FONT,
    OTHER_DASHES,
    PALETTE,
    SUBTITLE_CHARS,
    TITLE_CHARS,
    WIDTH,
    color_scale,
    dash_scale,
    fluid_names,
    setup,
)
