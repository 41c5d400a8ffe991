from parity.app.main import main

raise SystemExit(main())
