from kvgen.launch import main

main()
