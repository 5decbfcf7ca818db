"""Screens for people: view-models (plain classes returning plain data) and thin widget builders.

- `newbook.NewBookModel` and `newbook_view.newbook_screen`: enter a book chapter by chapter.
- `storyboard.StoryboardModel` and `storyboard_view.storyboard_screen`: split, browse, edit, review.
- `monitor.MonitorModel` and `monitor_view.monitor_screen`: the admin screen, refreshing itself.
- `serve.serve_monitor`: the admin screen as a web page (Voilà), for `pipeline-kit monitor`.

View-models call the engine and text APIs and never import a widget; only the `*_view`, `widgets`
and `live` modules know ipywidgets or asyncio. Every action returns an `actions.ActionResult`.
Nothing is imported here, so a notebook loads only the screen it shows.
"""
